#include "report/compare_row.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "config/duration.hpp"

namespace rlcheck::report {

std::string compare_name(const Report& report) {
  return report.target.name;
}

std::string retry_hint_seconds(const checks::RetryHintStats& retry) {
  if (!retry.min_ms)
    return "-";
  const double low = static_cast<double>(*retry.min_ms) / 1000.0;
  const double high = static_cast<double>(*retry.max_ms) / 1000.0;
  return low == high ? fmt::format("{:.3f}", low) : fmt::format("{:.3f}-{:.3f}", low, high);
}

CompareRow compare_row(const Report& report) {
  CompareRow row;
  row.name = compare_name(report);
  if (report.target.advertises_limits) {
    // Marked "adv" when the server advertised part of it, "def" when a default stands in.
    const Params& params = report.params;
    const std::string window = config::format_duration(std::chrono::milliseconds(params.window_ms));
    const bool advertised =
        params.limit_source == "advertised" || params.window_source == "advertised";
    const bool defaulted = params.limit_source == "default" || params.window_source == "default";
    row.limit = fmt::format("{}/{}{}{}", params.limit, window, advertised ? " adv" : "",
                            defaulted ? " def" : "");
  }
  checks::RetryHintStats retry;
  for (const auto& run : report.runs) {
    row.p50_ms = std::max(row.p50_ms, run.latency.p50);
    row.p99_ms = std::max(row.p99_ms, run.latency.p99);
    if (run.retry.min_ms) {
      retry.min_ms = std::min(retry.min_ms.value_or(*run.retry.min_ms), *run.retry.min_ms);
      retry.max_ms = std::max(retry.max_ms.value_or(*run.retry.max_ms), *run.retry.max_ms);
    }
  }
  row.retry_hint = retry_hint_seconds(retry);
  const Summary& s = report.summary;
  row.allowed = fmt::format("{}/{}/{}", s.allowed_min, s.allowed_median, s.allowed_max);
  row.over = fmt::format("{}/{}", s.runs_over_limit, report.runs.size());
  row.requests_per_second = s.requests_per_second;
  for (const auto& check : report.checks) {
    if (check.status == checks::Status::fail)
      row.failed_checks.push_back(check.id);
  }
  return row;
}

bool shared_url(const std::vector<Report>& reports) {
  return std::all_of(reports.begin(), reports.end(), [&reports](const Report& report) {
    return report.target.url == reports.front().target.url;
  });
}

}  // namespace rlcheck::report
