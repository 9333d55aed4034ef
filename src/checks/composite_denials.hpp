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

// What the parts said of one denial's room: every one had room, and the part with the least
// room stands for it (its use of its capacity). Both paths of audit_composite fill it.
struct DenialRooms {
  uint16_t parts = 0;  // parts that judged it
  uint16_t part = 0;   // the part with the least room...
  bool room = true;    // every one of them had room
  double used = 0;     // ...its use, of its capacity
  double capacity = 1;

  void add(size_t p, double part_used, double part_capacity, bool part_room) {
    const bool tighter = parts == 0 || part_used / part_capacity > used / capacity;
    ++parts;
    room = room && part_room;
    if (tighter) {
      used = part_used;
      capacity = part_capacity;
      part = static_cast<uint16_t>(p);
    }
  }
};

// Adds one part's wait to `combined`: the soonest instant every part has room is the latest of
// their waits. A part with room now (unexplained) waits nothing; one the request can never pass
// makes it never.
void add_wait(HintRange& combined, const HintRange& range);

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
