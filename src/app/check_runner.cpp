#include "app/check_runner.hpp"

#include "app/http_check.hpp"
#include "app/redis_check.hpp"
#include "app/run_preflight.hpp"

#include <fmt/format.h>

#include "faults/fault_schedule.hpp"

namespace rlcheck::app {

std::vector<report::Report> run_checks(const config::Config& config, report::RecordsWriter* records,
                                       std::string* cut_short, coord::Session* shared) {
  ensure_descriptors(descriptors_needed(connections_needed(config)),
                     fmt::format("-p {}", config.load.concurrency));
  check_source_addresses(config.load.source_addresses);
  std::vector<report::Report> reports;
  if (config.command == config::Command::http || config.compare_urls) {
    for (const std::string& url : config.http.urls) {
      reports.push_back(check_http_endpoint(config, url, nullptr, records, shared));
      if (reports.back().interrupted)
        break;
    }
    return reports;
  }
  RedisSession session = open_redis_session(config);
  if (config.command == config::Command::compare) {
    for (config::Strategy strategy : config.compare_strategies) {
      try {
        reports.push_back(check_redis_limiter(session, config, strategy, nullptr, records));
      } catch (const FatalError& error) {
        // Before anything was measured it is the test's set-up that failed; after, the
        // reports so far still stand.
        if (reports.empty() || error.code() != ExitCode::cannot_test)
          throw;
        if (cut_short != nullptr)
          *cut_short = error.what();
        break;
      }
      if (reports.back().interrupted)
        break;
    }
  } else {
    reports.push_back(
        check_redis_limiter(session, config, config.redis.strategy, nullptr, records, shared));
  }
  return reports;
}

std::optional<std::string> fault_failure(const report::Report& report) {
  for (const checks::RunStats& run : report.runs) {
    for (const checks::FaultWindow& fault : run.faults) {
      if (faults::failed_to_apply(fault)) {
        return fmt::format("--fault {} could not be applied in run {}: {}", fault.spec, run.run,
                           fault.error);
      }
    }
  }
  return std::nullopt;
}

ExitCode exit_code_of(const report::Report& report, bool hook) {
  if (report.interrupted)
    return ExitCode::interrupted;
  ExitCode code = ExitCode::ok;
  if (report.verdict == checks::Verdict::error || fault_failure(report) ||
      (report.workers && !report.workers->lost.empty()))
    code = ExitCode::cannot_test;
  if (report.verdict == checks::Verdict::fail)
    code = ExitCode::check_failed;
  if (hook && code != ExitCode::ok)
    code = ExitCode::hook_blocked;
  return code;
}

ExitCode overall_exit_code(const std::vector<report::Report>& reports) {
  ExitCode overall = ExitCode::ok;
  for (const report::Report& report : reports) {
    const auto code = static_cast<ExitCode>(report.exit_code);
    if (code == ExitCode::interrupted)
      return code;
    if (code != ExitCode::ok && (code == ExitCode::cannot_test || overall == ExitCode::ok)) {
      overall = code;
    }
  }
  return overall;
}

}  // namespace rlcheck::app
