#include "app/contract_fit_note.hpp"

namespace rlcheck::app {
namespace {

// Records kept for the fit, over all runs (about 120 bytes each); a longer test gets no fit
// rather than holding every run in memory.
constexpr int64_t k_max_fit_records = 1'000'000;

}  // namespace

FitRecords::FitRecords(const config::Config& config) : wanted_(!config.checks.contract) {}

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
  auto fit = checks::fit_contract(runs_, report.runs, report.checks, params, contract.audit);
  if (!fit)
    return;
  checks::note_fit(report.checks, *fit);
  report.contract_fit = std::move(*fit);
}

}  // namespace rlcheck::app
