#include "coord/clock_offset.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace rlcheck::coord {
namespace {

constexpr int64_t k_time_resolution_ns = 1000;  // TIME answers in microseconds

}  // namespace

ClockEstimate estimate_clock(std::span<const ClockSample> samples) {
  const ClockSample* best = &samples.front();
  for (const ClockSample& sample : samples) {
    if (sample.steady_after_ns - sample.steady_before_ns <
        best->steady_after_ns - best->steady_before_ns) {
      best = &sample;
    }
  }
  ClockEstimate estimate;
  estimate.round_trip_ns = std::max<int64_t>(0, best->steady_after_ns - best->steady_before_ns);
  const int64_t steady_mid = best->steady_before_ns + estimate.round_trip_ns / 2;
  const int64_t wall_mid = best->wall_before_ns + (best->wall_after_ns - best->wall_before_ns) / 2;
  estimate.steady_offset_ns = best->remote_ns - steady_mid;
  estimate.wall_offset_ns = best->remote_ns - wall_mid;
  estimate.uncertainty_ns = (estimate.round_trip_ns + 1) / 2 + k_time_resolution_ns;
  return estimate;
}

int64_t pairwise_uncertainty(std::span<const int64_t> uncertainties_ns) {
  std::vector<int64_t> sorted(uncertainties_ns.begin(), uncertainties_ns.end());
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  if (sorted.empty())
    return 0;
  return sorted.size() == 1 ? sorted[0] : sorted[0] + sorted[1];
}

}  // namespace rlcheck::coord
