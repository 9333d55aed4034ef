#include "app/check_runner.hpp"

#include <memory>
#include <optional>

#include <fmt/format.h>

#include "faults/fault_schedule.hpp"
#include "runner/run_loop.hpp"
#include "runner/run_preflight.hpp"
#include "targets/target_kind.hpp"

namespace rlcheck::app {

std::vector<report::Report> run_checks(const config::Config& config, report::RecordsWriter* records,
                                       std::string* cut_short, coord::Session* session,
                                       observe::Monitor* monitor) {
  const targets::TargetKind& kind = targets::kind_of(config);
  runner::ensure_descriptors(runner::descriptors_needed(runner::connections_needed(
                                 config, kind.identity_per_source_address)),
                             fmt::format("-p {}", config.load.concurrency));
  runner::check_source_addresses(config.load.source_addresses);
  const targets::TargetPlan plan = kind.plan(config);
  // One monitor for every target: compare's count into the same metrics.
  std::optional<observe::Monitor> own_monitor;
  if (monitor == nullptr)
    monitor = &own_monitor.emplace(config);
  const runner::RunOutputs outputs{nullptr, records, plan.variants ? nullptr : session, monitor};
  std::vector<report::Report> reports;
  for (const targets::PlannedTarget& planned : plan.targets) {
    try {
      const std::unique_ptr<runner::Target> target = planned.make();
      reports.push_back(runner::run_test(*target, *planned.config, outputs));
    } catch (const base::FatalError& error) {
      // Before anything was measured it is the test's set-up that failed; after, the reports
      // so far still stand.
      if (reports.empty() || error.code() != base::ExitCode::cannot_test)
        throw;
      if (cut_short != nullptr)
        *cut_short = error.what();
      break;
    }
    if (reports.back().interrupted)
      break;
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

base::ExitCode exit_code_of(const report::Report& report, bool hook) {
  if (report.interrupted)
    return base::ExitCode::interrupted;
  base::ExitCode code = base::ExitCode::ok;
  if (report.verdict == checks::Verdict::error || fault_failure(report) ||
      (report.workers && !report.workers->lost.empty()))
    code = base::ExitCode::cannot_test;
  if (report.verdict == checks::Verdict::fail)
    code = base::ExitCode::check_failed;
  if (hook && code != base::ExitCode::ok)
    code = base::ExitCode::hook_blocked;
  return code;
}

base::ExitCode overall_exit_code(const std::vector<report::Report>& reports) {
  base::ExitCode overall = base::ExitCode::ok;
  for (const report::Report& report : reports) {
    const auto code = static_cast<base::ExitCode>(report.exit_code);
    if (code == base::ExitCode::interrupted)
      return code;
    if (code != base::ExitCode::ok &&
        (code == base::ExitCode::cannot_test || overall == base::ExitCode::ok)) {
      overall = code;
    }
  }
  return overall;
}

}  // namespace rlcheck::app
