#include "app/judgement.hpp"

namespace rlcheck::app {

report::Params configured_params(const config::Config& config) {
  report::Params params;
  params.requests = config.load.requests;
  params.concurrency = config.load.concurrency;
  params.runs = config.load.runs;
  params.threads = config.load.threads;
  params.limit = config.checks.limit;
  params.window_ms = config::to_milliseconds(config.checks.window);
  params.interval_ms = static_cast<double>(config.load.interval.count()) / 1e6;
  return params;
}

checks::CheckParams check_params(const config::Config& config, int64_t limit,
                                 int64_t max_retry_after_ms) {
  checks::CheckParams params;
  params.limit = limit;
  params.requests = config.load.requests;
  params.window_ms = config::to_milliseconds(config.checks.window);
  params.max_retry_after_ms = max_retry_after_ms;
  params.max_errors = config.checks.max_errors;
  params.exact = config.checks.exact;
  return params;
}

void judge(report::Report& report, const checks::CheckParams& params) {
  report.checks = checks::evaluate_checks(report.runs, params);
  report.verdict = checks::verdict_of(report.checks);
  report.summary = report::summarize(report.runs);
}

}  // namespace rlcheck::app
