#pragma once
// The lock-outs and hints of several parts judged in one pass over the run's denials, where
// every part keys its records by identity and counts no denials: each identity's denials are
// visited once, in send order, and every part is asked of each at once (its room, its wait).
// The same verdicts as judging each part over the whole run first and combining after (the
// general path of audit_composite), without a table of what each part said of every denial.

#include <cstdint>
#include <string>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"
#include "checks/retry_accuracy.hpp"

namespace rlcheck::checks {

// One part as the pass reads it.
struct PartDenialViews {
  const IdentityRecords* views = nullptr;  // by identity: the run's own records, or a copy's
  bool own_records = false;                // `views` are the run's identities themselves
  AdmissionRule rule;                      // with start_wall_ns set
  std::string spec;                        // named by the worst lock-out
};

struct DenialVerdictTotals {
  LockOuts lockouts;
  RetryAccuracy retry_accuracy;
  SecondGrid grid;           // the sends of the denials whose hints were judged
  std::vector<bool> locked;  // by identity: a lock-out among its denials
};

// `parts`' views hold one entry per identity of `identities`, each with the same denials in the
// same order (a part's copy changes costs, windows and admissions, never a denial's place).
// Denials sent before `judge_from_ns` are not judged for lock-outs. `weighted`: a denial needs
// room for its cost.
DenialVerdictTotals judge_denials_at_once(const IdentityRecords& identities,
                                          const std::vector<PartDenialViews>& parts,
                                          int64_t start_wall_ns, int64_t judge_from_ns,
                                          bool weighted, const AccuracyTolerance& tolerance);

}  // namespace rlcheck::checks
