#pragma once
// Reads the clocks a limiter may decide by at a run's start and end (engine/clock_drift): the
// target's own (Redis TIME) and this host's wall clock, which scripts given {now_ms} read and
// limiters on this machine keep.

#include <optional>

#include "engine/clock_drift.hpp"
#include "runner/target.hpp"

namespace rlcheck::runner {

class ClockWatch {
 public:
  // Reads the clocks now; `enabled` false (the virtual clock: the limiter is told the time)
  // reads nothing.
  ClockWatch(Target& target, bool enabled);
  // Reads them again: the drift the audits must allow for, or nullopt when none was measured.
  std::optional<engine::ClockDrift> finish();

 private:
  Target& target_;
  bool enabled_;
  std::optional<engine::ClockReading> limiter_;
  engine::ClockReading wall_;
};

// This host's wall clock, paired with the steady clock.
engine::ClockReading read_wall_clock();

}  // namespace rlcheck::runner
