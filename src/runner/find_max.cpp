#include "runner/find_max.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace rlcheck::runner {
namespace {

constexpr double k_ns_per_ms = 1e6;
// Below this share of its planned requests sent, a step did not offer the rate it names.
constexpr double k_min_sent_share = 0.95;
// At least this share of the connections busy on average over a step: the pool was the limit.
constexpr double k_saturated_share = 0.9;

double ms(int64_t ns) {
  return static_cast<double>(ns) / k_ns_per_ms;
}

// The histogram overstates a percentile by less than one bucket (1/64 of its value): a value
// that still misses once that is taken off missed for sure.
int64_t lower_edge(int64_t upper) {
  return upper - upper / 65;
}

config::Nanos tightest(const std::vector<config::SloBound>& slo) {
  config::Nanos least = slo.front().bound;
  for (const config::SloBound& bound : slo)
    least = std::min(least, bound.bound);
  return least;
}

}  // namespace

StepCounts count_step(const engine::RunResult& result, uint64_t planned, uint64_t slots) {
  StepCounts counts;
  counts.planned = planned;
  counts.slots = slots;
  counts.span_ns = result.duration_ns;
  for (const engine::RequestRecord& record : result.records) {
    switch (record.outcome) {
      case engine::Outcome::allowed:
        ++counts.allowed;
        break;
      case engine::Outcome::denied:
        ++counts.denied;
        break;
      default:
        ++counts.errors;
        break;
    }
    if (!(record.outcome == engine::Outcome::error &&
          record.error == engine::ErrorKind::not_sent)) {
      ++counts.sent;
      counts.busy_ns += std::max<int64_t>(0, record.replied_ns - record.sent_ns);
    }
  }
  counts.latency_ns = result.latency_ns;
  counts.lateness_ns = result.lateness_ns;
  return counts;
}

bool pool_saturated(const StepCounts& counts) {
  return counts.slots > 0 && counts.span_ns > 0 &&
         static_cast<double>(counts.busy_ns) >= k_saturated_share *
                                                    static_cast<double>(counts.slots) *
                                                    static_cast<double>(counts.span_ns);
}

report::FindMaxStep judge_step(double rate_per_s, const std::string& phase, config::Nanos duration,
                               const StepCounts& counts, const std::vector<config::SloBound>& slo,
                               int64_t max_errors) {
  report::FindMaxStep step;
  step.rate_per_s = static_cast<int64_t>(rate_per_s);
  step.phase = phase;
  step.duration_ms = ms(duration.count());
  step.planned = counts.planned;
  step.sent = counts.sent;
  step.allowed = counts.allowed;
  step.denied = counts.denied;
  step.errors = counts.errors;
  step.p50_ms = ms(counts.latency_ns.percentile(50));
  step.p99_ms = ms(counts.latency_ns.percentile(99));
  step.lateness_p99_ms = ms(counts.lateness_ns.percentile(99));

  std::vector<std::string> misses;
  bool sure = false;
  for (const config::SloBound& bound : slo) {
    const int64_t value = counts.latency_ns.percentile(bound.percentile);
    step.percentiles_ms.push_back(ms(value));
    if (value > bound.bound.count()) {
      misses.push_back(fmt::format("p{} {:.1f}ms over {}", bound.percentile, ms(value),
                                   config::format_duration(bound.bound)));
      sure = sure || lower_edge(value) > bound.bound.count();
    }
  }
  if (counts.latency_ns.count() == 0) {
    misses.push_back("no request was decided");
    sure = true;
  }
  if (static_cast<int64_t>(counts.errors) > max_errors) {
    misses.push_back(fmt::format("{} errors over --max-errors {}", counts.errors, max_errors));
    sure = true;
  }
  if (static_cast<double>(counts.sent) < k_min_sent_share * static_cast<double>(counts.planned)) {
    misses.push_back(fmt::format("sent {} of {} planned", counts.sent, counts.planned));
    sure = true;
  }
  step.passed = misses.empty();
  step.missed_for_sure = !step.passed && sure;
  step.client_bound = counts.lateness_ns.percentile(99) > tightest(slo).count() / 2;
  step.connections = counts.slots;
  step.pool_bound = step.client_bound && pool_saturated(counts);
  for (const std::string& miss : misses)
    step.why += (step.why.empty() ? "" : ", ") + miss;
  return step;
}

FindMaxSearch::FindMaxSearch(const config::FindMaxConfig& options, double start_per_s,
                             int64_t max_errors)
    : options_(options), max_errors_(max_errors) {
  int64_t rate = std::max<int64_t>(1, std::llround(start_per_s));
  for (int k = 0; k < k_max_ladder_steps && rate <= k_max_rate_per_s; ++k, rate *= 2)
    pending_.push_back(rate);
}

std::optional<int64_t> FindMaxSearch::next_rate() const {
  if (pending_.empty())
    return std::nullopt;
  return pending_.front();
}

config::LoadConfig FindMaxSearch::next_load(const config::LoadConfig& base) const {
  config::LoadConfig load = base;
  const int64_t rate = pending_.front();
  load.rate = config::Rate{rate, std::chrono::seconds(1)};
  load.requests = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<long double>(options_.step.count()) * rate / 1e9L));
  return load;
}

void FindMaxSearch::observe(const StepCounts& counts) {
  const int64_t rate = pending_.front();
  pending_.erase(pending_.begin());
  steps_.push_back(judge_step(static_cast<double>(rate), refining_ ? "refine" : "ladder",
                              options_.step, counts, options_.slo, max_errors_));
  const report::FindMaxStep& step = steps_.back();
  if (step.passed) {
    best_ = std::max(best_.value_or(0), rate);
    return;
  }
  first_miss_ = rate;
  pending_.clear();
  if (step.client_bound) {
    client_bound_ = true;
    pool_bound_ = step.pool_bound;
    return;
  }
  if (!refining_ && best_)
    plan_refinement();
}

void FindMaxSearch::plan_refinement() {
  refining_ = true;
  const int64_t low = *best_;
  const int64_t high = *first_miss_;
  for (int k = 1; k <= k_refine_steps; ++k) {
    const int64_t rate = low + (high - low) * k / (k_refine_steps + 1);
    if (rate > low && rate < high && (pending_.empty() || pending_.back() != rate))
      pending_.push_back(rate);
  }
}

report::FindMax FindMaxSearch::result() const {
  report::FindMax search;
  search.slo = config::format_slo(options_.slo);
  search.steps = steps_;
  search.max_rate = best_;
  search.client_bound = client_bound_;
  search.pool_bound = pool_bound_;
  search.ceiling = !first_miss_ && !steps_.empty() && pending_.empty();
  return search;
}

}  // namespace rlcheck::runner
