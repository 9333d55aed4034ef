#include "report/report.hpp"

#include <algorithm>

namespace rlcheck::report {

std::string strategy_label(const Target& target) {
  if (target.time_source == "client" && target.strategy != "fixed-window")
    return target.strategy + " (client time)";
  return target.strategy;
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

}  // namespace rlcheck::report
