#pragma once
// --contract ban:L/W,B[,renew]: more than L requests in the inner window W ban the identity for
// B (restarted by every request during it with `renew`); no admission during a ban.
//
// Which request starts the ban differs between limiters: rack-attack's Allow2Ban admits the
// L-th request of its window and bans from it; a fail2ban-style block starts at the first
// request over L. Every claim holds under both readings. A limiter counts the requests it sees
// outside a ban, whatever it answered (requests during a ban count toward no later one, as in
// rack-attack); only admissions are held to the inner window (the limit and contract checks,
// audited by contract_audit).
//
// - Admissions during a ban: L admissions and one more decided request after them, all surely
//   in one inner window, surely started a ban between the last admission's send and that
//   request's reply; an admission sent after it and answered before the earliest it can end
//   (its start + B - tolerance, renewed by every request surely during it) is a failure.
// - Bans longer than B: a denial sent after every ban that could have begun (at any request
//   whose window could hold L requests, or before the run) had surely ended, while its window
//   held fewer than L requests, is a lock-out (utilisation).
// - Hints: a denial's wait is held to the ban's end: from the earliest a proved ban can end to
//   the latest any possible one can.

#include <cstdint>
#include <optional>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"
#include "checks/retry_accuracy.hpp"

namespace rlcheck::checks {

struct BanRule {
  int64_t ban_ns = 0;
  bool renews = false;  // every request during a ban restarts it
};

// An admission made while a ban was surely in force.
struct BanBreach {
  uint32_t identity = 0;
  uint64_t seq = 0;
  int64_t sent_ns = 0;     // the admission's send, from the run start
  int64_t banned_ns = 0;   // the ban had surely begun by then
  int64_t ban_end_ns = 0;  // and could not end before then
};

// A ban surely in force: begun by `from_ns` (its trigger's reply) and not over before `to_ns`
// (its earliest end, renewed), from the run start. What the HTML timeline shades.
struct BanSpan {
  uint32_t identity = 0;
  int64_t from_ns = 0;
  int64_t to_ns = 0;
};

// The sure ban spans kept per identity: a timeline draws a few hundred at most.
inline constexpr size_t k_ban_spans_kept = 512;

struct BanAudit {
  int64_t bans = 0;                // bans surely begun
  std::vector<BanSpan> spans;      // by identity, then time; k_ban_spans_kept per identity
  int64_t breaches = 0;            // admissions during one
  std::optional<BanBreach> first;  // the earliest sent (of equals, the lowest identity)
  LockOuts lockouts;
  RetryAccuracy retry;
};

// How far a limiter's ban may run past B on its clock: the rule's clock allowance, 1 ms of
// rounding and 1 ms per 10 s of drift.
int64_t ban_tolerance_ns(const AdmissionRule& inner, const BanRule& ban);

// `inner` is sliding or fixed on the clock (fixed windows placed by `start_wall_ns`).
// `fresh_state`: no count or ban from before the run (else denials are judged only once one
// window has passed, and a ban may be in force at the start).
BanAudit audit_bans(const IdentityRecords& identities, const AdmissionRule& inner,
                    const BanRule& ban, int64_t start_wall_ns, bool fresh_state,
                    const AccuracyTolerance& tolerance);

}  // namespace rlcheck::checks
