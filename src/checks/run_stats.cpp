#include "checks/run_stats.hpp"

#include <algorithm>

namespace rlcheck::checks {
namespace {

double to_ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

void count_hint(RetryHintStats& stats, const engine::RequestRecord& record,
                int64_t max_retry_after_ms) {
  stats.expected = stats.expected || record.hint_expected || record.retry_ms.has_value();
  if (!record.retry_ms) {
    if (record.hint_expected)
      ++stats.missing;
    return;
  }
  const int64_t hint = *record.retry_ms;
  ++stats.present;
  if (hint < 0)
    ++stats.invalid;
  if (hint > max_retry_after_ms)
    ++stats.over_bound;
  stats.min_ms = std::min(stats.min_ms.value_or(hint), hint);
  stats.max_ms = std::max(stats.max_ms.value_or(hint), hint);
}

}  // namespace

RunStats summarize_run(int run, const engine::RunResult& result, const AdmissionRule& rule,
                       int64_t max_retry_after_ms) {
  RunStats stats;
  stats.run = run;
  stats.interrupted = result.interrupted;
  stats.requests = static_cast<int64_t>(result.records.size());
  stats.duration_ms = to_ms(result.duration_ns);
  for (const auto& record : result.records) {
    switch (record.outcome) {
      case engine::Outcome::allowed:
        ++stats.allowed;
        break;
      case engine::Outcome::denied:
        ++stats.denied;
        count_hint(stats.retry, record, max_retry_after_ms);
        break;
      case engine::Outcome::error:
        ++stats.errors;
        ++stats.error_kinds[engine::error_kind_name(record.error)];
        break;
    }
  }
  // Denials without any hint, from a limiter that gives hints elsewhere in the run, count too.
  if (stats.retry.expected) {
    int64_t silent = 0;
    for (const auto& record : result.records) {
      if (record.outcome == engine::Outcome::denied && !record.retry_ms && !record.hint_expected) {
        ++silent;
      }
    }
    stats.retry.missing += silent;
  }
  for (const auto& [kind, message] : result.error_samples) {
    stats.error_samples[engine::error_kind_name(kind)] = message;
  }
  const auto& latency = result.latency_ns;
  stats.latency = {to_ms(latency.percentile(50)), to_ms(latency.percentile(90)),
                   to_ms(latency.percentile(99)), to_ms(latency.max())};
  stats.peak = find_admission_peak(result.records, rule);
  return stats;
}

}  // namespace rlcheck::checks
