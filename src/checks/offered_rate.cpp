#include "checks/offered_rate.hpp"

#include <algorithm>
#include <cmath>

namespace rlcheck::checks {
namespace {

// A plan's bins: where each starts and ends, the instants from which a send counts in the next
// bin, and what each bin's rate is counted over.
struct PlanBins {
  std::vector<int64_t> edges;     // bins + 1 instants: each bin's start, then the plan's end
  std::vector<int64_t> counting;  // bins instants: a send at or after the k-th is past bin k
  std::vector<uint64_t> planned;  // per bin, the requests due in it (uniform arrivals)
  std::vector<double> seconds;    // per bin, how long its planned requests take
  double flat_rate = 0;           // one --rate with uniform arrivals: the rate, else 0

  double sent_per_s(size_t bin, int64_t sent) const {
    // n requests of a flat rate take n / rate: the rate, exactly, when all n were sent.
    if (flat_rate > 0)
      return flat_rate * (static_cast<double>(sent) / static_cast<double>(planned[bin]));
    return seconds[bin] > 0 ? static_cast<double>(sent) / seconds[bin] : 0;
  }
};

// Uniform arrivals: a whole number of requests a bin, its edges at their due instants; a send
// counts in the bin whose due instants it is nearest to (the midpoints between the last due in
// one bin and the first in the next divide them; the last bin ends half a gap after its last).
PlanBins uniform_bins(const engine::Schedule& schedule) {
  const uint64_t requests = schedule.requests();
  const uint64_t per_bin = (requests + k_rate_bins - 1) / k_rate_bins;
  const uint64_t bins = (requests + per_bin - 1) / per_bin;
  const auto due = [&schedule, requests](uint64_t index) {
    return index >= requests ? schedule.span_ns() : schedule.due(index).count();
  };
  PlanBins plan;
  if (schedule.stage_count() == 0)
    plan.flat_rate = schedule.rate_at(0);
  for (uint64_t k = 0; k <= bins; ++k) {
    const uint64_t first = std::min(k * per_bin, requests);
    plan.edges.push_back(due(first));
    if (k == 0)
      continue;
    const int64_t before = due(first - 1);
    plan.counting.push_back(before + (plan.edges.back() - before) / 2);
    plan.planned.push_back(first - (k - 1) * per_bin);
    plan.seconds.push_back(static_cast<double>(plan.edges[k] - plan.edges[k - 1]) / 1e9);
  }
  return plan;
}

// Poisson arrivals: bins of equal width from the start line.
PlanBins even_bins(const engine::Schedule& schedule) {
  const uint64_t bins = std::min<uint64_t>(k_rate_bins, schedule.requests());
  const auto span = static_cast<double>(schedule.span_ns());
  PlanBins plan;
  for (uint64_t k = 0; k <= bins; ++k) {
    plan.edges.push_back(std::llround(span * static_cast<double>(k) / static_cast<double>(bins)));
    if (k == 0)
      continue;
    plan.counting.push_back(plan.edges.back());
    plan.seconds.push_back(static_cast<double>(plan.edges[k] - plan.edges[k - 1]) / 1e9);
  }
  return plan;
}

}  // namespace

std::vector<RateBin> offered_rate(std::span<const int64_t> sent_ns,
                                  const engine::Schedule& schedule) {
  if (!schedule.open_model() || schedule.requests() == 0 || schedule.span_ns() <= 0)
    return {};
  const PlanBins plan = schedule.poisson() ? even_bins(schedule) : uniform_bins(schedule);
  const size_t bins = plan.seconds.size();
  // Past the plan's last bin, bins of the plan's average width from its end.
  const int64_t end = plan.edges.back();
  const int64_t late_width = std::max<int64_t>(1, end / static_cast<int64_t>(bins));
  std::vector<int64_t> counts(bins, 0), late;
  for (const int64_t sent : sent_ns) {
    const auto bin = static_cast<size_t>(
        std::upper_bound(plan.counting.begin(), plan.counting.end(), sent) - plan.counting.begin());
    if (bin < bins) {
      ++counts[bin];
      continue;
    }
    const auto at = static_cast<size_t>(std::max<int64_t>(0, sent - end) / late_width);
    if (late.size() <= at)
      late.resize(at + 1, 0);
    ++late[at];
  }
  std::vector<RateBin> out;
  for (size_t k = 0; k < bins; ++k) {
    RateBin bin;
    bin.from_ns = plan.edges[k];
    bin.to_ns = plan.edges[k + 1];
    bin.planned_per_s = schedule.rate_at(bin.from_ns + (bin.to_ns - bin.from_ns) / 2);
    bin.sent_per_s = plan.sent_per_s(k, counts[k]);
    out.push_back(bin);
  }
  for (size_t j = 0; j < late.size(); ++j) {
    RateBin bin;
    bin.from_ns = end + static_cast<int64_t>(j) * late_width;
    bin.to_ns = bin.from_ns + late_width;
    bin.sent_per_s = static_cast<double>(late[j]) * 1e9 / static_cast<double>(late_width);
    out.push_back(bin);
  }
  return out;
}

}  // namespace rlcheck::checks
