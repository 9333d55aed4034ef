#pragma once
// Denials the contract cannot justify: made while the window (or the bucket) surely had room.
// A limiter that counts denials, or extends its window on every denial, locks a persistent
// client out although the client's admissions left room; this finds each such denial.
//
// "Surely" favours the limiter, as the contract audit does: every admission that may have come
// before the denial (sent before its reply) counts as used, every admission placed where it
// stays in the window longest (its reply, plus the limiter's clock tolerance), and the denial
// where the window is fullest (its send). A request sent while the window had room but decided
// after it filled is therefore never held against the limiter.
// A request that errored after it may have reached the limiter (engine::is_unknown) counts as
// used by every denial sent after it: the server may have admitted it at any later instant.

#include <cstdint>
#include <optional>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

struct LockOut {
  uint32_t identity = 0;
  uint64_t seq = 0;
  int64_t sent_ns = 0;  // the denial's send, from the run start
  double used = 0;      // the most of the window (the bucket) the admissions seen can have used
  double capacity = 0;  // the limit, or the burst
};

struct LockOuts {
  int64_t judged = 0;            // denials judged (sent after `judge_from_ns`)
  int64_t count = 0;             // of those, denied while the contract surely had room
  std::optional<LockOut> worst;  // the one with the most room (the earliest of equals)
};

// How long state from before a run can still count against it: one window, or the time a
// bucket takes to refill from empty to full (burst / refill rate).
int64_t contract_memory_ns(const AdmissionRule& rule);

// Fixed windows already assigned (assign_wall_windows). Denials sent before `judge_from_ns`
// (from the run start) are not judged: state from before the run may explain them.
LockOuts find_lockouts(const IdentityRecords& identities, const AdmissionRule& rule,
                       int64_t start_wall_ns, int64_t judge_from_ns);

}  // namespace rlcheck::checks
