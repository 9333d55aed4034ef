#pragma once
// A token bucket that refills in steps, seen from outside: the pure half of the probe's reading
// of it (app/probe_shapes). Probed every tenth of an interval once drained, a smooth bucket
// admits single probes, one per token; a bucket that adds K tokens at each tick admits K probes
// in a row, then none until the next tick.

#include <cstdint>
#include <optional>
#include <span>

#include "checks/ban_probe.hpp"
#include "checks/contract_inference.hpp"

namespace rlcheck::checks {

// Whether two probes in a row were admitted among `requests` (a drained bucket probed finely).
bool admits_in_a_row(std::span<const ProbeRequest> requests);

// `requests`: a readmitted probe (the first, decided after a denial at `opening_denied_ns`) and
// the probes after it, in order. Unset until a whole second run of admissions was seen (ended
// by a denial), the first run two or more.
struct StepReading {
  int64_t tokens = 0;        // the second run's admissions: the tokens of a tick
  int64_t first_tokens = 0;  // the first run's
  Bracket interval;          // between the two runs' starts
};
std::optional<StepReading> read_steps(int64_t opening_denied_ns,
                                      std::span<const ProbeRequest> requests);

}  // namespace rlcheck::checks
