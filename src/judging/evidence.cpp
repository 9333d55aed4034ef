#include "judging/evidence.hpp"

#include <algorithm>

#include <cstdio>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "judging/judgement.hpp"
#include "judging/many_hosts.hpp"

namespace rlcheck::judging {
namespace {

ContractChoice contract_of(const Judging& judging, const coord::Session* session) {
  ContractChoice contract =
      choose_contract(judging.config, judging.strategy, judging.config.checks.limit);
  widen_for_clocks(contract, session);
  return contract;
}

void apply_audit(const StateAudit& audit, checks::RunStats& stats) {
  stats.key_ttls = audit.key_ttls;
  for (const checks::KeyTtl& key : audit.key_ttls) {
    if (key.ttl_ms == -1)
      stats.keys_without_ttl.push_back(key.key);
  }
  stats.keys_unread = audit.unread;
}

uint64_t count_of(const RunCounters& counters, const char* name) {
  const auto found = counters.find(name);
  return found == counters.end() ? 0 : found->second;
}

int64_t failed_checks(const report::Report& report) {
  return std::ranges::count_if(report.checks, [](const checks::CheckResult& check) {
    return check.status == checks::Status::fail;
  });
}

// --contract fixed or sliding-counter without --anchor: where the windows start was never
// stated, so it is a reading to try, not a default to fail on: on the clock's boundaries first,
// then opened at the first hit.
bool anchor_unstated(const config::Config& config) {
  const auto& checks = config.checks;
  return checks.contract && !checks.anchor &&
         (*checks.contract == "fixed" || *checks.contract == "sliding-counter");
}

std::vector<Judging> readings_of(std::vector<Judging> judgings) {
  std::vector<Judging> readings;
  for (Judging& judging : judgings) {
    if (!anchor_unstated(judging.config)) {
      readings.push_back(std::move(judging));
      continue;
    }
    judging.anchor_read = true;
    for (const char* anchor : {"clock", "first-hit"}) {
      readings.push_back(judging);
      readings.back().config.checks.anchor = anchor;
    }
  }
  return readings;
}

// Says which reading of an unstated --anchor the checks judged, in the contract check.
void note_anchor_reading(report::Report& report, const std::string& anchor) {
  for (checks::CheckResult& check : report.checks) {
    if (check.id != "contract" || check.status == checks::Status::skip)
      continue;
    check.detail += fmt::format(
        "; --anchor not given: judged with windows {} (readings tried in order: clock, "
        "first-hit)",
        anchor == "first-hit" ? "opened at the first hit" : "on the clock's boundaries");
  }
}

}  // namespace

Evidence::Evidence(JudgedTarget& target, const config::Config& config,
                   const coord::Session* session)
    : target_(target), config_(config), session_(session), fit_(config) {
  // --audit stream keeps no records to judge after the runs; it is only chosen where the flags
  // settle the judging (http: --limit and --window given), so it is judged before them too.
  // An unstated anchor is judged under each reading after the runs, from their records.
  if ((target.judged_before_runs() && !anchor_unstated(config)) ||
      config.checks.audit == config::AuditMode::stream) {
    early_ = target.judgings({}, false).front();
    early_contract_ = contract_of(*early_, session);
  }
}

engine::RunResult& Evidence::keep(int run, engine::RunResult result,
                                  std::vector<checks::FaultWindow> faults) {
  kept_.push_back({run, std::move(faults), {}});
  if (early_) {
    pending_ = std::move(result);
    return *pending_;
  }
  results_.push_back(std::move(result));
  return results_.back();
}

const checks::AuditParams* Evidence::stream_audit() const {
  if (config_.checks.audit != config::AuditMode::stream || !early_contract_)
    return nullptr;
  if (const auto refusal = checks::StreamAudit::refusal(early_contract_->audit)) {
    // --audit stream was checked against the flags; the strategy's own contract may still
    // need every record.
    if (config_.checks.audit_given)
      throw base::usage_error(
          fmt::format("--audit stream: not with this limiter's contract: {}", *refusal));
    return nullptr;
  }
  return &early_contract_->audit;
}

engine::RunResult& Evidence::keep_streamed(int run, engine::RunResult result,
                                           checks::StreamAudit audit) {
  pending_audit_.emplace(std::move(audit));
  return keep(run, std::move(result), {});
}

void Evidence::settle(const StateAudit& audit) {
  Kept& kept = kept_.back();
  kept.audit = audit;
  if (pending_ && pending_audit_) {
    checks::RunStats stats = checks::summarize_measures(kept.run, *pending_);
    engine::RequestRecord unsent;
    unsent.error = engine::ErrorKind::not_sent;
    for (uint64_t i = 0; i < pending_->unsent; ++i)
      pending_audit_->add(unsent);
    pending_audit_->finish(stats);
    if (stats.streamed_out_of_order > 0) {
      fmt::print(stderr,
                 "warning: run {}: {} requests came out of send order and were left out of the "
                 "audits over time (what they would show is not judged)\n",
                 kept.run, stats.streamed_out_of_order);
    }
    if (stats.streamed_closed_window > 0) {
      fmt::print(stderr,
                 "warning: run {}: {} requests fell in a fixed window already closed (their "
                 "limiter's clock went back) and were left out of the audits over time\n",
                 kept.run, stats.streamed_closed_window);
    }
    apply_audit(audit, stats);
    stats_.push_back(std::move(stats));
    pending_.reset();
    pending_audit_.reset();
    return;
  }
  if (!pending_)
    return;
  checks::RunStats stats =
      checks::summarize_run(kept.run, *pending_, early_contract_->audit, std::move(kept.faults));
  apply_audit(audit, stats);
  fit_.keep(*pending_);
  stats_.push_back(std::move(stats));
  pending_.reset();
}

report::Report Evidence::judge(const TestLog& log) {
  if (early_) {
    judged_contract_ = early_contract_;
    return judge_under(*early_, std::move(stats_), fit_, *early_contract_, log);
  }
  const std::vector<Judging> judgings = readings_of(target_.judgings(results_, log.interrupted));
  report::Report chosen;
  for (size_t k = 0; k < judgings.size(); ++k) {
    const bool last = k + 1 == judgings.size();
    const ContractChoice contract = contract_of(judgings[k], session_);
    // Summarizing writes into the records: every configuration but the last reads a copy.
    std::vector<engine::RunResult> copies;
    if (!last)
      copies = results_;
    std::vector<engine::RunResult>& results = last ? results_ : copies;
    FitRecords fit(config_);
    std::vector<checks::RunStats> runs;
    for (size_t i = 0; i < results.size(); ++i) {
      std::vector<checks::FaultWindow> faults = kept_[i].faults;
      runs.push_back(
          checks::summarize_run(kept_[i].run, results[i], contract.audit, std::move(faults)));
      apply_audit(kept_[i].audit, runs.back());
      fit.keep(results[i]);
    }
    report::Report report = judge_under(judgings[k], std::move(runs), fit, contract, log);
    const bool settled = report.verdict != checks::Verdict::fail;
    if (k == 0 || settled || failed_checks(report) <= failed_checks(chosen)) {
      chosen = std::move(report);
      judged_contract_ = contract;
    }
    if (settled)
      break;  // no other configuration changes a pass, an error or an interruption
  }
  return chosen;
}

report::Report Evidence::judge_under(const Judging& judging, std::vector<checks::RunStats> runs,
                                     FitRecords& fit, const ContractChoice& contract,
                                     const TestLog& log) {
  report::Report report;
  report.mode = config_.kind;
  report.params = configured_params(judging.config, contract);
  target_.describe(report);
  if (judging.limit_source)
    report.params.limit_source = *judging.limit_source;
  if (judging.window_source)
    report.params.window_source = *judging.window_source;
  report.params.window_from_reset = judging.window_from_reset;
  if (judging.anchor_read)
    report.params.anchor_source = "reading";
  report.params.window_readings_ms = judging.window_readings_ms;
  report.runs = std::move(runs);
  if (std::ranges::any_of(report.runs, [](const checks::RunStats& run) { return run.streamed; }))
    report.params.audit = "stream";
  report.retry_verification = log.retry_verification;
  report.keys_left = log.keys_left;
  if (report.transport) {
    report.transport->moved += count_of(log.counters, "moved");
    report.transport->ask += count_of(log.counters, "ask");
    report.transport->tryagain += count_of(log.counters, "tryagain");
    report.transport->reconnects += count_of(log.counters, "reconnects");
  }
  report.script_reloads += count_of(log.counters, "script_reloads");
  report.interrupted = log.interrupted;
  report.find_max = log.find_max;

  checks::CheckParams params = check_params(judging.config, report.params.limit, contract);
  params.key_ttl_applies = judging.key_ttl_applies;
  params.retry_hint_optional = judging.retry_hint_optional;
  params.fresh_state = params.fresh_state || judging.reset_before_each_run;
  if (!params.fresh_state)
    params.identity_note = judging.state_note;
  judging::judge(report, params);
  if (judging.anchor_read)
    note_anchor_reading(report, contract.anchor);
  // A policy advertised as q per w leaves its algorithm open: every reading of it is tried
  // before the test fails.
  if (!(judging.policy_advertised && fit.read_advertised_policy(report, params, contract)))
    fit.explain(report, params, contract);
  describe_workers(report, session_);
  return report;
}

}  // namespace rlcheck::judging
