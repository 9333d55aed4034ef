#pragma once
// The contract fit of a failed test: each run's records are kept while the test runs (only when
// --contract was not given, or several were read strictly, and only up to a bound on memory),
// and once the verdict is a failure the other contracts are fitted to them
// (checks::fit_contract), or the several contracts read as counting denials
// (checks::fit_consume_on_deny). The verdict stands.

#include <cstdint>
#include <vector>

#include "checks/checks.hpp"
#include "checks/contract_fit.hpp"
#include "config/config.hpp"
#include "engine/run.hpp"
#include "judging/contract_choice.hpp"
#include "report/report.hpp"

namespace rlcheck::judging {

class FitRecords {
 public:
  explicit FitRecords(const config::Config& config);

  // Takes the records of a summarized run (its result keeps none), when a fit may be wanted.
  void keep(engine::RunResult& result);

  // For a failed report: the fit, in the details of the checks it clears and in
  // report.contract_fit. Does nothing for a passing, erroneous or interrupted one.
  void explain(report::Report& report, const checks::CheckParams& params,
               const ContractChoice& contract);

  // For a failed HTTP test whose limit and window came from an advertised policy (q per w) and
  // named no contract: the policy's other readings (a token bucket of q refilled q per w, fixed
  // windows on the clock or opened at the first hit) are replayed, and the first that explains
  // every admission, denial and hint becomes the contract the report judges. The server
  // promised q per w and keeps that promise under this reading; a fail must hold under every
  // reading. True when one did.
  bool read_advertised_policy(report::Report& report, const checks::CheckParams& params,
                              const ContractChoice& contract);

 private:
  bool wanted_;  // --contract not given, or several read strictly
  int64_t kept_ = 0;
  std::vector<checks::RecordedRun> runs_;
};

}  // namespace rlcheck::judging
