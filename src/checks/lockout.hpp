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
#include <functional>
#include <optional>
#include <string>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

struct LockOut {
  uint32_t identity = 0;
  uint64_t seq = 0;
  int64_t sent_ns = 0;  // the denial's send, from the run start
  double used = 0;      // the most of the window (the bucket) the admissions seen can have used
  double capacity = 0;  // the limit, or the burst
  std::string part;     // several contracts: the part with the least room (its spec)
};

// A client that kept sending and was never admitted again, long after the contract had room:
// the pattern of a limiter that counts its own denials (HAProxy http_req_rate, Flask-Limiter
// elastic expiry), which keeps a client locked out for as long as it keeps asking.
struct DenialCounting {
  uint32_t identity = 0;
  int64_t last_admitted_ns = 0;  // the reply of its last admission, from the run start
  int64_t denials = 0;           // its requests after that, every one denied
  double offered_per_s = 0;      // the rate it sent them at
};

struct LockOuts {
  int64_t judged = 0;  // denials judged (sent after `judge_from_ns`)
  int64_t count = 0;   // of those, denied while the contract surely had room
  // The one with the most room; of equals, the earliest sent, then the lowest identity and seq.
  std::optional<LockOut> worst;
  // The identity locked out longest by what looks like denial counting, if any (of equal
  // denials, the lowest identity).
  std::optional<DenialCounting> denial_counting;
};

// Recognises denial counting in one identity's records, conservatively: it was admitted, then
// every request it sent was denied (none errored: a lost reply may have been an admission),
// without a gap as long as `window_ns` between them, for longer than the contract remembers
// an admission (`memory_ns`) plus a window, and at least two of those denials came after that.
// nullopt otherwise.
std::optional<DenialCounting> find_denial_counting(RecordSpan records, uint32_t identity,
                                                   int64_t window_ns, int64_t memory_ns);

// A bucket of unknown state at the run's start held at least the largest of these, over the
// admissions replied before a denial's send, each by its rank among them (1-based, by reply)
// and its reply: what it took, less the most refill until its reply (plus the clock).
double bucket_start_term(size_t rank, int64_t replied_ns, const AdmissionRule& rule);

// Room for one more (`need` units: its cost): below the limit, or whole tokens left (with a
// hair for rounding).
bool had_room(double used, double capacity, double need = 1.0);
// Counts `denial` as judged, and as a lock-out when `room`; the worst is the one with the most
// room (of equals, the earliest sent, then the lowest identity and seq).
void judge_denial(LockOuts& found, const engine::RequestRecord& denial, uint32_t identity,
                  double used, double capacity, bool room);

// How long state from before a run can still count against it: one window, or the time a
// bucket takes to refill from empty to full (burst / refill rate).
int64_t contract_memory_ns(const AdmissionRule& rule);

// Fixed windows already assigned (assign_wall_windows). Denials sent before `judge_from_ns`
// (from the run start) are not judged: state from before the run may explain them.
LockOuts find_lockouts(const IdentityRecords& identities, const AdmissionRule& rule,
                       int64_t start_wall_ns, int64_t judge_from_ns);

// Each judged denial of `judged` (sent at or after `judge_from_ns`) with the most of `rule`
// that the admissions of `used` can have used at it, and whether that left room: the denials
// of one part of several contracts. `used` holds the same keys (identities or groups) as
// `judged`, each the same records or, `used_counts_denials`, with every denial read as an
// admission (--consume-on-deny checked: the part counts denials too; the denial judged does not
// count against itself). Sliding, fixed and bucket rules read denials so; others read `judged`.
// The denial is named by its seq.
using DenialRoomVisitor =
    std::function<void(uint64_t denial_seq, double used, double capacity, bool room)>;
// `weighted`: each request needs its cost (records counted in units, an admission of cost c
// being c records).
void visit_denial_rooms(const IdentityRecords& judged, const IdentityRecords& used,
                        const AdmissionRule& rule, int64_t start_wall_ns, int64_t judge_from_ns,
                        bool used_counts_denials, bool weighted, const DenialRoomVisitor& visit);

}  // namespace rlcheck::checks
