#include "report/report.hpp"

#include <algorithm>
#include <cmath>

#include <algorithm>

#include <fmt/format.h>

namespace rlcheck::report {

std::string strategy_label(const Target& target) {
  if (target.time_source == "client" && target.strategy != "fixed-window")
    return target.strategy + " (client time)";
  return target.strategy;
}

void describe_redis_limiter(Target& target) {
  target.name = target.script.empty() ? strategy_label(target) : target.script;
  target.limiter =
      target.script.empty() ? strategy_label(target) : fmt::format("script {}", target.script);
  target.rows = {{"limiter", target.limiter}};
  if (!target.key.empty())
    target.rows.emplace_back("key", target.key);
  target.clock = "Redis's own clock (TIME, EXPIRE/PEXPIRE TTLs)";
}

void describe_endpoint(Target& target) {
  target.name = target.url;
  target.limiter = target.method;
  target.rows = {{"method", target.method}};
  target.clock = "the endpoint's own clock";
  target.noun = "endpoint";
  target.advertises_limits = true;
  target.answers_statuses = true;
}

Summary summarize(const std::vector<checks::RunStats>& runs) {
  Summary summary;
  if (runs.empty())
    return summary;
  std::vector<int64_t> allowed;
  double total_requests = 0;
  double total_ms = 0;
  for (const auto& run : runs) {
    allowed.push_back(run.allowed);
    if (run.peak.exceeded())
      ++summary.runs_over_limit;
    total_requests += static_cast<double>(run.requests);
    total_ms += run.duration_ms;
    if (run.virtual_span_ms) {
      summary.virtual_span_ms = std::max(summary.virtual_span_ms.value_or(0), *run.virtual_span_ms);
      summary.virtual_total_ms += *run.virtual_span_ms;
      summary.real_total_ms += run.duration_ms;
    }
  }
  std::sort(allowed.begin(), allowed.end());
  summary.allowed_min = allowed.front();
  summary.allowed_max = allowed.back();
  const size_t middle = allowed.size() / 2;
  summary.allowed_median = allowed.size() % 2 == 1
                               ? static_cast<double>(allowed[middle])
                               : static_cast<double>(allowed[middle - 1] + allowed[middle]) / 2.0;
  summary.requests_per_second = total_ms > 0 ? total_requests / (total_ms / 1000.0) : 0;
  return summary;
}

std::string clock_note(const Report& report) {
  if (!report.params.virtual_clock)
    return {};
  const Summary& summary = report.summary;
  // 3 h of virtual time, 1.28 s real: the unit that makes each readable.
  const auto text = [](double ms) {
    if (ms >= 86'400'000 * 2.0)
      return fmt::format("{:.3g} days", ms / 86'400'000);
    if (ms >= 3'600'000)
      return fmt::format("{:.3g} h", ms / 3'600'000);
    if (ms >= 60'000)
      return fmt::format("{:.3g} min", ms / 60'000);
    return fmt::format("{:.3g} s", ms / 1000);
  };
  const std::string& clock = report.target.clock;
  std::string note = fmt::format(
      "{} of virtual time in {} real: the limiter was told each instant; {} stayed real",
      text(summary.virtual_total_ms), text(summary.real_total_ms), clock);
  if (summary.real_total_ms < summary.virtual_total_ms) {
    note +=
        ", so no state expired by TTL within a run (a limiter that forgets only through "
        "expiry looks as if it never forgot)";
  } else {
    note +=
        "; real time outran virtual time, so a TTL may have ended state before its virtual "
        "window did";
  }
  return note;
}

namespace {

// The decimals that leave three significant digits of `value` (> 0).
int decimals_for_three_digits(double value) {
  return std::max(0, 2 - static_cast<int>(std::floor(std::log10(value))));
}

}  // namespace

double histogram_figure(double value) {
  if (!(value > 0))
    return value;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(value)));
  return std::round(value * scale) / scale;
}

std::string histogram_text(double value) {
  const double figure = histogram_figure(value);
  if (!(figure > 0))
    return "0";
  return fmt::format("{:.{}f}", figure, decimals_for_three_digits(figure));
}

}  // namespace rlcheck::report
