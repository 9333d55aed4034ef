#pragma once
// A second, longer limit behind the first one the probe found: the pure half of the probe's
// sustained phase (app/probe_sustained). A fresh identity sends just under the first limit's
// rate for a while; a denial the first limit cannot explain (it had room) is a second limit's.
// Its limit is the phase's admissions before that denial, its window the wait from the phase's
// first admission until one is admitted again (a sliding window frees its oldest slot then).

#include <cstdint>
#include <optional>
#include <span>

#include "checks/contract_inference.hpp"

namespace rlcheck::checks {

// The first limit, as far as the room test needs it: a window of `limit` per `window_ns`
// (fixed, sliding), or a bucket of `burst` refilled at `refill_per_s` (the slowest rate its
// readmissions allow, so that a denial is blamed on the bucket whenever it might be empty).
struct FirstLimit {
  bool bucket = false;
  int64_t limit = 0;
  int64_t window_ns = 0;
  int64_t burst = 0;
  double refill_per_s = 0;
  // How far the first limit's instants may be off (its window's tolerance, the probes'
  // timing): a window counts admissions over `window_ns + slack_ns`.
  int64_t slack_ns = 0;
};

// The first limit as measured; unset for what a sustained phase cannot be paced against (a
// sliding-window counter, whose estimate may deny below its rate; a queue; denial counting).
std::optional<FirstLimit> first_limit_of(const InferredContract& inferred, int64_t slack_ns);

// The first limit's rate (requests per second): L / W, or a bucket's refill.
double first_rate_per_s(const FirstLimit& first);
// How long the first limit takes to fill once (W, or burst / refill): the phase is measured in it.
int64_t first_span_ns(const FirstLimit& first);

// Whether the first limit surely had room for `request`, given the phase's earlier requests
// (`before`, in order, on a fresh identity): a window held fewer than its limit over its window
// and slack, a bucket (full at the start) kept a token. Each request was decided within half
// its send-to-reply time of its instant: the admissions are taken as late, and `request` as
// early, as that allows.
bool first_limit_had_room(const FirstLimit& first, std::span<const ProbeRequest> before,
                          const ProbeRequest& request);

// What a sustained phase's requests say. `second_denial` is the first denial the first limit
// cannot explain; `readmission` the bracket of the first admission after it.
struct SustainedReading {
  int64_t requests = 0;  // sent in the phase
  int64_t admitted = 0;  // admitted in it
  std::optional<int64_t> first_admitted_ns;
  std::optional<int64_t> last_ns;           // the phase's last request
  std::optional<int64_t> second_denial_ns;  // unset: none the first limit cannot explain
  std::optional<int64_t> second_hint_ms;    // that denial's retry hint
  int64_t admitted_before_second = 0;       // the second limit's count
  std::optional<Readmission> readmission;   // after that denial
  int64_t explained_denials = 0;            // the first limit's own (pacing fell behind)
};
SustainedReading read_sustained(const FirstLimit& first, std::span<const ProbeRequest> phase);

// The second limit's window from a reading with a readmission (a sliding window frees its
// oldest slot, the phase's first admission, one window after it) or, without one, from the
// denial's hint (the wait until that slot frees). Unset with neither.
struct SecondWindow {
  int64_t window_ns = 0;
  int64_t tolerance_ns = 0;
  bool from_hint = false;
};
std::optional<SecondWindow> second_window(const SustainedReading& reading);

}  // namespace rlcheck::checks
