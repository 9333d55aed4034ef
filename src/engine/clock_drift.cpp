#include "engine/clock_drift.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace rlcheck::engine {

namespace {

int64_t offset_ns(const ClockReading& reading) {
  return reading.clock_ns - reading.steady_ns;
}

}  // namespace

ClockTrack::ClockTrack(const ClockReading& first)
    : first_(first),
      last_(first),
      low_offset_ns_(offset_ns(first)),
      high_offset_ns_(offset_ns(first)),
      uncertainty_ns_(first.uncertainty_ns) {}

void ClockTrack::add(const ClockReading& reading) {
  last_ = reading;
  low_offset_ns_ = std::min(low_offset_ns_, offset_ns(reading));
  high_offset_ns_ = std::max(high_offset_ns_, offset_ns(reading));
  uncertainty_ns_ = std::max(uncertainty_ns_, reading.uncertainty_ns);
}

ClockDrift ClockTrack::drift(std::string source) const {
  ClockDrift drift;
  drift.source = std::move(source);
  drift.over_ns = last_.steady_ns - first_.steady_ns;
  drift.ahead_ns = offset_ns(last_) - offset_ns(first_);
  drift.uncertainty_ns = 2 * uncertainty_ns_;
  const int64_t excursion = high_offset_ns_ - low_offset_ns_;
  const int64_t assumed_ns = drift.over_ns / 1'000'000 * k_assumed_drift_ppm;
  // Only an excursion the readings' uncertainty cannot explain refutes the assumed rate.
  if (excursion - drift.uncertainty_ns > assumed_ns)
    drift.slack_ns = excursion + drift.uncertainty_ns;
  return drift;
}

ClockDrift drift_between(std::string source, const ClockReading& before,
                         const ClockReading& after) {
  ClockTrack track(before);
  track.add(after);
  return track.drift(std::move(source));
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
