#include "engine/clock_drift.hpp"

#include <cstdlib>
#include <utility>

namespace rlcheck::engine {

ClockDrift drift_between(std::string source, const ClockReading& before,
                         const ClockReading& after) {
  ClockDrift drift;
  drift.source = std::move(source);
  drift.over_ns = after.steady_ns - before.steady_ns;
  drift.ahead_ns = (after.clock_ns - before.clock_ns) - drift.over_ns;
  drift.uncertainty_ns = before.uncertainty_ns + after.uncertainty_ns;
  const int64_t assumed_ns = drift.over_ns / 1'000'000 * k_assumed_drift_ppm;
  // Only a difference the readings' uncertainty cannot explain refutes the assumed rate.
  if (std::llabs(drift.ahead_ns) - drift.uncertainty_ns > assumed_ns)
    drift.slack_ns = std::llabs(drift.ahead_ns) + drift.uncertainty_ns;
  return drift;
}

std::optional<ClockDrift> worse_drift(std::optional<ClockDrift> a, std::optional<ClockDrift> b) {
  if (!a)
    return b;
  if (!b)
    return a;
  if (a->slack_ns != b->slack_ns)
    return a->slack_ns > b->slack_ns ? a : b;
  return std::llabs(a->ahead_ns) >= std::llabs(b->ahead_ns) ? a : b;
}

}  // namespace rlcheck::engine
