#pragma once
// A ban seen from outside, the pure half of the probe's ban test (app/probe_ban): denials that
// outlast what counts the requests. A fresh identity sends L - 1 requests and, most of a
// readmission wait later, L + 1 more: a window still counts the first ones and admits one, a
// limiter whose count forgot them within that time admits L, although the first identity's
// denials lasted the whole wait. Then trials of the same shape at growing gaps, each on an
// identity of its own, time what counts (the inner window) and tell whether it slides or is
// fixed on the clock.

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "checks/contract_inference.hpp"

namespace rlcheck::checks {

// Where a duration lies: in (low, high], ns.
struct Bracket {
  int64_t low_ns = 0;
  int64_t high_ns = 0;
  int64_t mid_ns() const { return low_ns + (high_ns - low_ns) / 2; }
};

// Whether the second part of a trial (L + 1 sent one at a time after L - 1) found the first
// part forgotten: L admitted before its first denial.
bool trial_forgot(int64_t limit, std::span<const ProbeRequest> second_part);

// The ban from `triggering` (a burst whose last admission before its first denial, or that
// denial, started it) to `readmitted`, widened by `slack_ns` (the probes' own timing and the
// requests' send-to-reply times); unset when the burst was never denied.
std::optional<Bracket> ban_from(std::span<const ProbeRequest> triggering,
                                const Readmission& readmitted, int64_t slack_ns);
// Where both readings allow; unset when they do not overlap.
std::optional<Bracket> both(const Bracket& a, const Bracket& b);

// One trial of the inner window, on an identity of its own: L - 1 requests, then L + 1 more
// some gap later; instants on the wall clock (ns since the epoch), as each was decided.
struct BanTrial {
  int64_t first_from_ns = 0;   // the first part's first request
  int64_t first_to_ns = 0;     // and its last
  int64_t second_from_ns = 0;  // the second part's first request
  int64_t counted_ns = 0;      // its L-th (or last) request
  bool forgot = false;         // trial_forgot
};

// What counts, read from every trial: a sliding window of W forgets the first part exactly
// when the gap outlasts W (kept: W is longer than the first part's last to the second part's
// first; forgot: no longer than the first part's first to the second part's L-th); a window
// fixed on the clock (boundaries at the epoch's multiples of W, as `--contract ban:fixed`
// places them) forgets exactly when a boundary falls between the parts. Fixed windows are tried
// at every multiple of 100 ms up to `longest_ns`, and the one whole number of seconds that fits
// is taken (else the one that fits), as a measured duration is snapped. Unset, with `why_not`,
// unless the trials name one reading (within `slack_ns` either way).
struct InnerWindow {
  std::string kind;  // "fixed" (on the clock) or "sliding"
  Bracket window;    // fixed: the one length that fits, as a bracket of width 0
};
std::optional<InnerWindow> read_inner_window(std::span<const BanTrial> trials, int64_t longest_ns,
                                             int64_t slack_ns, std::string& why_not);

}  // namespace rlcheck::checks
