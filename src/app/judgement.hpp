#pragma once
// The parts of a report that every target fills the same way: the configured load and
// limits, and the checks with their verdict.

#include <cstdint>

#include "checks/checks.hpp"
#include "config/config.hpp"
#include "report/report.hpp"

namespace rlcheck::app {

// requests, concurrency, runs, threads, limit, window and interval as configured.
report::Params configured_params(const config::Config& config);

// The check parameters for `limit` (configured, or advertised) and the retry bound.
checks::CheckParams check_params(const config::Config& config, int64_t limit,
                                 int64_t max_retry_after_ms);

// Evaluates the checks on report.runs and fills checks, verdict and summary.
void judge(report::Report& report, const checks::CheckParams& params);

}  // namespace rlcheck::app
