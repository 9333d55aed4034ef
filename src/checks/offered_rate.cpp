#include "checks/offered_rate.hpp"

#include <algorithm>
#include <cmath>

namespace rlcheck::checks {
namespace {

// A plan's bins: where each starts and ends, which requests are due in each, and what each
// bin's rate is counted over.
struct PlanBins {
  std::vector<int64_t> edges;     // bins + 1 instants: each bin's start, then the plan's end
  std::vector<uint64_t> planned;  // per bin, the requests due in it
  std::vector<double> seconds;    // per bin, its length
  uint64_t per_bin = 0;           // uniform arrivals: requests a bin (the last may hold fewer)
  double flat_rate = 0;           // one --rate with uniform arrivals: the rate, else 0

  size_t bins() const { return seconds.size(); }
  // The bin holding `t_ns`, bins() past the plan's end.
  size_t bin_at(int64_t t_ns) const {
    const auto after = std::upper_bound(edges.begin() + 1, edges.end(), t_ns);
    return static_cast<size_t>(after - edges.begin() - 1);
  }
  double sent_per_s(size_t bin, int64_t sent) const {
    // n requests of a flat rate take n / rate: the rate, exactly, when all n were sent.
    if (flat_rate > 0)
      return flat_rate * (static_cast<double>(sent) / static_cast<double>(planned[bin]));
    return seconds[bin] > 0 ? static_cast<double>(sent) / seconds[bin] : 0;
  }
};

// Uniform arrivals: a whole number of requests a bin, its edges at their due instants.
PlanBins uniform_bins(const engine::Schedule& schedule) {
  const uint64_t requests = schedule.requests();
  PlanBins plan;
  plan.per_bin = (requests + k_rate_bins - 1) / k_rate_bins;
  const uint64_t bins = (requests + plan.per_bin - 1) / plan.per_bin;
  if (schedule.stage_count() == 0)
    plan.flat_rate = schedule.rate_at(0);
  for (uint64_t k = 0; k <= bins; ++k) {
    const uint64_t first = std::min(k * plan.per_bin, requests);
    plan.edges.push_back(first == requests ? schedule.span_ns() : schedule.due(first).count());
    if (k == 0)
      continue;
    plan.planned.push_back(first - (k - 1) * plan.per_bin);
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
    if (k > 0)
      plan.seconds.push_back(static_cast<double>(plan.edges[k] - plan.edges[k - 1]) / 1e9);
  }
  return plan;
}

}  // namespace

std::vector<RateBin> offered_rate(std::span<const SentRequest> sent,
                                  const engine::Schedule& schedule) {
  if (!schedule.open_model() || schedule.requests() == 0 || schedule.span_ns() <= 0)
    return {};
  const PlanBins plan = schedule.poisson() ? even_bins(schedule) : uniform_bins(schedule);
  const size_t bins = plan.bins();
  const int64_t end = plan.edges.back();
  const int64_t late_width = std::max<int64_t>(1, end / static_cast<int64_t>(bins));
  // Poisson due instants are found fastest in index order (Schedule::Cursor).
  std::vector<SentRequest> ordered(sent.begin(), sent.end());
  if (schedule.poisson()) {
    std::sort(ordered.begin(), ordered.end(),
              [](const SentRequest& a, const SentRequest& b) { return a.index < b.index; });
  }
  engine::Schedule::Cursor cursor(schedule);
  std::vector<int64_t> counts(bins, 0), late;
  for (const SentRequest& request : ordered) {
    size_t bin = plan.bin_at(request.sent_ns);
    if (request.index < schedule.requests()) {
      const int64_t due = cursor.due(request.index).count();
      const size_t due_bin =
          plan.per_bin > 0 ? static_cast<size_t>(request.index / plan.per_bin) : plan.bin_at(due);
      const int64_t width = plan.edges[due_bin + 1] - plan.edges[due_bin];
      if (std::abs(request.sent_ns - due) < width)
        bin = due_bin;
    }
    if (bin < bins) {
      ++counts[bin];
      continue;
    }
    const auto at = static_cast<size_t>(std::max<int64_t>(0, request.sent_ns - end) / late_width);
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
