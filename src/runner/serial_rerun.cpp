#include "runner/serial_rerun.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/count_text.hpp"
#include "engine/run.hpp"

namespace rlcheck::runner {
namespace {

bool failed(const report::Report& report, const char* id) {
  return std::ranges::any_of(report.checks, [&](const checks::CheckResult& check) {
    return check.id == id && check.status == checks::Status::fail;
  });
}

// One connection, one request in flight, as fast as replies come: enough requests to see every
// admission the worst run got and as many again as the contract's capacity.
config::LoadConfig serial_load(const config::Config& config, const report::Report& report,
                               const judging::ContractChoice& contract) {
  int64_t most_allowed = 0;
  for (const checks::RunStats& run : report.runs)
    most_allowed = std::max(most_allowed, run.allowed);
  config::LoadConfig serial = config::one_at_a_time(
      {}, std::min(config.load.requests, most_allowed + contract.audit.rule.capacity() + 1));
  serial.timeout = config.load.timeout;
  serial.stop_after_errors = config.checks.max_errors;
  if (!config.load.source_addresses.empty())
    serial.source_addresses = {config.load.source_addresses.front()};
  return serial;
}

}  // namespace

bool wants_serial_rerun(const report::Report& report, const config::Config& config,
                        const Target& target, const judging::ContractChoice& contract) {
  // Only an over-admission in one burst: more admissions in flight at once than the capacity.
  // One spread over time (a bucket refilling faster than judged) has nothing to rerun.
  const int64_t capacity = contract.audit.rule.capacity();
  const bool burst = std::ranges::any_of(report.runs, [&](const checks::RunStats& run) {
    return run.peak.exceeded() && run.admitted_at_once > capacity;
  });
  return burst && report.verdict == checks::Verdict::fail && !report.interrupted &&
         failed(report, "limit") && !config.workers.distributed() && !config.find_max.enabled &&
         config.faults.faults.empty() && !config.load.virtual_clock &&
         !contract.audit.queue_depth && target.fresh_state_per_run();
}

std::optional<report::SerialRerun> rerun_serially(Target& target, const config::Config& config,
                                                  const judging::ContractChoice& contract,
                                                  const report::Report& report, int run,
                                                  std::vector<std::string>& left) {
  if (!target.prepare_run(run, /*leader=*/true))
    return std::nullopt;
  const config::LoadConfig load = serial_load(config, report, contract);
  engine::RunResult result = run_once(target, target.run_state(run), load);
  const StateAudit audit = target.audit_state(run, result.records.view());
  target.clean_up(run, audit, {}, left);
  if (result.interrupted)
    return std::nullopt;
  checks::AuditParams audit_params = contract.audit;
  audit_params.identities = 1;
  audit_params.timeline = false;
  const checks::RunStats stats = checks::summarize_run(run, result, audit_params, {});
  if (stats.allowed + stats.denied == 0)
    return std::nullopt;
  report::SerialRerun serial;
  serial.requests = stats.requests;
  serial.allowed = stats.allowed;
  serial.peak = stats.peak.count;
  serial.allowance = stats.peak.allowance;
  serial.within = !stats.peak.exceeded();
  return serial;
}

void note_serial_rerun(report::Report& report, const report::SerialRerun& serial) {
  const std::string rerun =
      fmt::format("a serial rerun ({} one at a time, on fresh state) admitted {}",
                  config::counted(serial.requests, "request"), serial.peak);
  const std::string note =
      serial.within ? fmt::format(
                          "; {} <= {:.4g}: the excess needs requests in flight together, the mark "
                          "of a check-then-act race",
                          rerun, serial.allowance)
                    : fmt::format(
                          "; {} > {:.4g} too: the limiter admits {} even one at a time, so this "
                          "is no race: its own count allows that many",
                          rerun, serial.allowance, serial.peak);
  for (checks::CheckResult& check : report.checks) {
    if (check.status == checks::Status::fail && (check.id == "limit" || check.id == "contract"))
      check.detail += note;
  }
}

}  // namespace rlcheck::runner
