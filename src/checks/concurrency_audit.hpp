#pragma once
// A concurrency cap (nginx limit_conn, HAProxy sc_conn_cur, a Redis semaphore, a mesh's circuit
// breaker): at most C admitted requests of one identity in progress at once, whatever the rate.
//
// What rlcheck knows of request k is its send s_k and its reply r_k on its own steady clock.
// The request arrived at the limiter at some a_k in [s_k, r_k] and held its place from a_k until
// the limiter let it go; when that happened is not seen. Two readings follow.
//
// Over-admission (limit, contract) needs a floor H: the endpoint holds every admitted request
// at least H before it replies (--hold DUR, or measured, below). Then a_k + H <= r_k, so
// a_k lies in [s_k, r_k - H], and the request surely held its place over every instant that
// [a_k, a_k + H] covers for every such a_k: the sure span [r_k - H, s_k + H), empty when
// r_k - s_k >= 2H. Admissions whose sure spans share an instant were in progress together
// under every placement the measurements allow; C + 1 of them prove the cap broken. Spans are
// half-open: one ending where another starts is no overlap (a limiter may release and admit
// at the same instant). Without a floor nothing is proven: each request may have been
// handled in an instant.
//
// The measured floor is the shortest latency of any admission less the target's unloaded
// latency (the 99th percentile of the denials', which the limiter answers without the
// backend; queue_audit's unloaded_latency_ns): the least time an admission spent beyond what
// a denial takes, less a tenth for the jitter of a loaded machine. It is a reading, not a
// proof: a backend that answers some requests at once (a cache) needs --hold. With no denials
// it leaves 0, and only --hold can prove anything.
//
// Lock-outs (utilisation): a denial d arrived somewhere in [s_d, r_d]. An admission k may have
// held its place at most over [s_k, r_k + slack]: a limiter releases after it wrote the reply,
// and a client can read it and send again before the release (k_release_slack_ns). A request
// that errored after it may have reached the limiter (engine::is_unknown) may hold its place
// from its send on, for ever. When fewer than C admissions may have been in progress anywhere
// in [s_d, r_d], the denial came while the cap surely had room.

#include <cstdint>
#include <optional>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"

namespace rlcheck::checks {

// A limiter may release a place this long after the client read the reply (nginx frees a
// limit_conn slot when it finalises the request, HAProxy when the session ends).
inline constexpr int64_t k_release_slack_ns = 50'000'000;

struct ConcurrencyRule {
  int64_t cap = 1;                 // C
  std::optional<int64_t> hold_ns;  // --hold; unset: measured
  int64_t slack_ns = k_release_slack_ns;
  // rlcheck redis --release-script: rlcheck releases each admission itself, so a run whose
  // admissions have no release logged (every loop interrupted) holds them to its end.
  bool released_by_run = false;
};

struct ConcurrencyAudit {
  int64_t cap = 0;
  int64_t hold_ns = 0;        // the floor the proof used
  bool hold_measured = true;  // false: --hold
  // --release-script: an admission's span ends at its release's reply, not its own reply.
  bool released_by_run = false;
  // The most admissions of one identity surely in progress at one instant (by the floor), the
  // identity (of equals, the lowest), the instant (from the run start; of equals, the
  // earliest) and the seqs of those admissions, ascending.
  int64_t surely_at_once = 0;
  uint32_t surely_identity = 0;
  int64_t surely_at_ns = 0;
  std::vector<uint64_t> surely_seqs;
  // The most whose send..reply spans share an instant: an upper bound on what was in flight.
  int64_t possibly_at_once = 0;
  bool exceeded() const { return surely_at_once > cap; }
};

// The most admissions in `records` (one identity) whose sure spans share an instant under the
// floor `hold_ns`: the count, the instant and their seqs.
struct SureOverlap {
  int64_t count = 0;
  int64_t at_ns = 0;
  std::vector<uint64_t> seqs;
};
SureOverlap most_surely_in_progress(RecordSpan records, int64_t hold_ns);

// The floor measured from a run (see above): 0 when nothing says more.
int64_t measured_hold_ns(const IdentityRecords& identities);

// Every identity's over-admission, and the lock-outs (each denial judged; `capacity` the cap,
// `used` how many admissions may have been in progress).
ConcurrencyAudit audit_concurrency(const IdentityRecords& identities, const ConcurrencyRule& rule,
                                   LockOuts& lockouts);

}  // namespace rlcheck::checks
