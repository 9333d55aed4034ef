#pragma once
// What a test's runs leave to judge, and the judging. Runs of a target whose judged
// configuration is known before the runs are summarized as they end (their records let go, or
// kept for the contract fit); the others are kept whole and summarized under each
// configuration the target offers once the runs are over.

#include <optional>
#include <string>
#include <vector>

#include "checks/checks.hpp"
#include "checks/stream_audit.hpp"
#include "config/config.hpp"
#include "coord/session.hpp"
#include "engine/run.hpp"
#include "judging/contract_choice.hpp"
#include "judging/contract_fit_note.hpp"
#include "judging/judged_target.hpp"
#include "report/report.hpp"

namespace rlcheck::judging {

// What the loop gathers besides the runs: the same under every judged configuration.
struct TestLog {
  std::optional<checks::RetryVerification> retry_verification;
  std::vector<std::string> keys_left;
  RunCounters counters;  // transport counts, summed over the runs and the workers
  bool interrupted = false;
  std::optional<report::FindMax> find_max;  // --find-max: the search's steps
};

class Evidence {
 public:
  Evidence(JudgedTarget& target, const config::Config& config, const coord::Session* session);

  // Takes run `run`'s result; the reference stays valid until settle().
  engine::RunResult& keep(int run, engine::RunResult result,
                          std::vector<checks::FaultWindow> faults);
  // --audit stream: what runs are audited against as they go (null: they keep their records).
  const checks::AuditParams* stream_audit() const;
  // Takes run `run`'s streamed result and its audit; `touched()` stands for its records.
  engine::RunResult& keep_streamed(int run, engine::RunResult result, checks::StreamAudit audit);
  // The run kept last is complete: `audit` is what its state was found to be.
  void settle(const StateAudit& audit);
  // Every run kept whole so far (none when they are summarized as they end).
  const std::vector<engine::RunResult>& results() const { return results_; }

  // The report: the runs judged under each configuration the target offers, the first that
  // passes (else the one with the fewest failed checks, the last on a tie).
  report::Report judge(const TestLog& log);
  // The contract the report judge() returned was judged under (unset before it).
  const std::optional<ContractChoice>& judged_contract() const { return judged_contract_; }

 private:
  struct Kept {
    int run = 0;
    std::vector<checks::FaultWindow> faults;
    StateAudit audit;
  };
  report::Report judge_under(const Judging& judging, std::vector<checks::RunStats> runs,
                             FitRecords& fit, const ContractChoice& contract, const TestLog& log);

  JudgedTarget& target_;
  const config::Config& config_;
  const coord::Session* session_;
  // Judged before the runs: the one configuration, its contract, the runs summarized so far.
  std::optional<Judging> early_;
  std::optional<ContractChoice> early_contract_;
  std::vector<checks::RunStats> stats_;
  FitRecords fit_;
  std::optional<engine::RunResult> pending_;          // the run kept last, until settled
  std::optional<checks::StreamAudit> pending_audit_;  // the same, streamed
  // Judged after the runs: each run whole.
  std::vector<engine::RunResult> results_;
  std::vector<Kept> kept_;
  std::optional<ContractChoice> judged_contract_;
};

}  // namespace rlcheck::judging
