#include "judging/many_hosts.hpp"

#include <fmt/format.h>

#include "checks/checks.hpp"

namespace rlcheck::judging {

void widen_for_clocks(ContractChoice& contract, const coord::Session* session) {
  if (session == nullptr)
    return;
  checks::allow_clock_uncertainty(contract.audit, session->clock_uncertainty_ns());
}

void describe_workers(report::Report& report, const coord::Session* session) {
  if (session == nullptr)
    return;
  report::Workers workers;
  workers.session = session->id();
  workers.clock_uncertainty_ms = static_cast<double>(session->clock_uncertainty_ns()) / 1e6;
  for (const coord::WorkerInfo& info : session->worker_info()) {
    report::WorkerSummary worker;
    worker.index = info.index;
    worker.host = info.host;
    worker.requests = info.requests;
    worker.clock_offset_ms = static_cast<double>(info.clock_offset_ns) / 1e6;
    worker.clock_uncertainty_ms = static_cast<double>(info.clock_uncertainty_ns) / 1e6;
    worker.lost = info.lost;
    worker.lost_in_run = info.lost_in_run;
    workers.list.push_back(worker);
  }
  workers.lost = session->lost_description();
  workers.merged_by = session->merged_by();
  report.workers = std::move(workers);
  if (report.workers->lost.empty())
    return;
  // The lost worker's records are missing, and with them admissions the limiter made: a check
  // that fails when it sees too few admissions (too few allowed, denials with room, hints
  // longer than the admissions seen predict) would fail for that alone. Those are not
  // judged. A check that fails on too many admissions still fails: the missing ones would only
  // add to them.
  for (checks::CheckResult& check : report.checks) {
    if (check.status == checks::Status::fail &&
        (check.id == "exact" || check.id == "utilisation" || check.id == "retry-after-accuracy")) {
      check.status = checks::Status::skip;
      check.detail = fmt::format(
          "not judged: {}, and the admissions among its missing requests decide this check",
          report.workers->lost);
    }
  }
  if (!report.interrupted)
    report.verdict = checks::Verdict::error;
}

}  // namespace rlcheck::judging
