#include "judging/contract_fit_note.hpp"

#include <fmt/format.h>

namespace rlcheck::judging {
namespace {

// Records kept for the fit, over all runs (about 120 bytes each); a longer test gets no fit
// rather than holding every run in memory.
constexpr int64_t k_max_fit_records = 1'000'000;

}  // namespace

// A fit is wanted when no contract was named, and of several contracts read strictly, the
// reading that counts denials (fit_consume_on_deny).
FitRecords::FitRecords(const config::Config& config)
    : wanted_(!config.checks.contract ||
              (config.checks.parts.size() >= 2 && !config.checks.consume_on_deny)) {}

void FitRecords::keep(engine::RunResult& result) {
  if (!wanted_)
    return;
  kept_ += static_cast<int64_t>(result.records.size());
  if (kept_ > k_max_fit_records) {
    wanted_ = false;
    runs_.clear();
    runs_.shrink_to_fit();
    return;
  }
  runs_.push_back({std::move(result.records), result.start_wall_ns});
  result.records.clear();
}

void FitRecords::explain(report::Report& report, const checks::CheckParams& params,
                         const ContractChoice& contract) {
  if (!wanted_ || report.verdict != checks::Verdict::fail)
    return;
  if (!contract.audit.parts.empty()) {
    auto fit =
        checks::fit_consume_on_deny(runs_, report.runs, report.checks, params, contract.audit);
    if (!fit)
      return;
    checks::note_fit(report.checks, *fit);
    report.contract_fit = std::move(*fit);
    return;
  }
  const int64_t capacity = contract.audit.rule.capacity();
  if (const int64_t at_once = checks::admitted_at_once(runs_); at_once > capacity)
    checks::note_race(report.checks, at_once, capacity);
  auto fit = checks::fit_contract(runs_, report.runs, report.checks, params, contract.audit);
  if (!fit)
    return;
  checks::note_fit(report.checks, *fit);
  report.contract_fit = std::move(*fit);
}

bool FitRecords::read_advertised_policy(report::Report& report, const checks::CheckParams& params,
                                        const ContractChoice& contract) {
  if (!wanted_ || report.verdict != checks::Verdict::fail)
    return false;
  auto found =
      checks::rejudge(checks::policy_readings(params.limit, params.window_ms, contract.audit.rule),
                      runs_, report.runs, report.checks, params, contract.audit);
  if (!found)
    return false;
  const checks::ContractFit& fit = found->fit;
  report.runs = std::move(found->stats);
  report.checks = std::move(found->checks);
  const std::string reading = fmt::format(
      "; the advertised policy ({} per {}s) read as {}, which explains every "
      "admission, denial and hint (a sliding window does not)",
      params.limit, params.window_ms / 1000, fit.flags);
  for (checks::CheckResult& check : report.checks) {
    if (check.id == "contract")
      check.detail += reading;
  }
  report.verdict = checks::verdict_of(report.checks);
  report.summary = report::summarize(report.runs);
  report.params.contract = fit.contract;
  report.params.anchor = fit.anchor;
  if (fit.contract == "token-bucket") {
    report.params.burst = fit.burst;
    report.params.refill = fit.refill;
    report.params.burst_source = "advertised";
    report.params.refill_source = "advertised";
  }
  return true;
}

}  // namespace rlcheck::judging
