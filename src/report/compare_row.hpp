#pragma once
// One target's row of `rlcheck compare`, worked out once for the terminal's table
// (report/human_report) and the HTML page's (report/html_compare).

#include <string>
#include <vector>

#include "checks/run_stats.hpp"
#include "report/report.hpp"

namespace rlcheck::report {

struct CompareRow {
  std::string name;        // the strategy, script or endpoint (compare_name)
  std::string limit;       // http: "5/10s", with "adv" or "def" when not a flag's; else ""
  std::string allowed;     // over the runs: "min/median/max"
  std::string over;        // "runs over the limit/runs"
  std::string retry_hint;  // seconds: "1.000", "0.950-1.000", "-" without hints
  double p50_ms = 0;       // the slowest run's latency percentiles
  double p99_ms = 0;
  double requests_per_second = 0;
  std::vector<std::string> failed_checks;  // the ids of the checks that failed, in order
};

// What compare calls a target: its endpoint (http), script path, or strategy's label.
std::string compare_name(const Report& report);

CompareRow compare_row(const Report& report);

// Retry hints in seconds: "1.000", a range "0.950-1.000", or "-" without hints.
std::string retry_hint_seconds(const checks::RetryHintStats& retry);

// Whether every compared target is on the same URL (strategies on one Redis): then the URL is
// said once, above the rows.
bool shared_url(const std::vector<Report>& reports);

}  // namespace rlcheck::report
