#pragma once
// Reads the clocks a limiter may decide by over a run (engine/clock_drift): the target's own
// (Redis TIME) at the run's start and end, and this host's wall clock, which scripts given
// {now_ms} read and limiters on this machine keep, at the start, four times a second while the
// run lasts (a step there and back again shows), and at the end.

#include <optional>

#include "engine/clock_drift.hpp"
#include "runner/target.hpp"

namespace rlcheck::runner {

class ClockWatch {
 public:
  // Reads the clocks now; `enabled` false (the virtual clock: the limiter is told the time)
  // reads nothing.
  ClockWatch(Target& target, bool enabled);
  // While the run lasts (RunHooks::tick): this host's wall clock again.
  void sample();
  // Reads them again: the drift the audits must allow for, or nullopt when none was measured.
  std::optional<engine::ClockDrift> finish();

 private:
  Target& target_;
  std::optional<engine::ClockReading> limiter_;
  std::optional<engine::ClockTrack> wall_;
};

// This host's wall clock, paired with the steady clock.
engine::ClockReading read_wall_clock();

}  // namespace rlcheck::runner
