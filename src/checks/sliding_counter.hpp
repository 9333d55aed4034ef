#pragma once
// Sliding-window counters (`--contract sliding-counter`: Cloudflare's design, HAProxy's rate
// counters, `limits` `sliding-window-counter`): two fixed windows of W, weighted. A request
// is admitted when prev x (1 - f) + curr < L, f its position in the current window (0..1),
// prev and curr the admissions counted in the previous and the current window. The windows
// turn on the limiter's clock (`--anchor clock`), or start at the first admission and again
// at the first one after both windows emptied (`--anchor first-hit`).
//
// Every instant is uncertain between a request's send and its reply (widened by the
// limiter's clock), and so is the phase of first-hit windows. Each audit takes the placement
// that favours the limiter: an admission is held against it only when the estimate was at
// least L under every placement (only admissions surely in a window count, each at the
// weight it has when the request is decided as late as it can be); a denial only when the
// estimate had room under every placement (every admission possibly before it counts, each at
// the largest weight any placement gives it, and every request whose reply was lost as one
// more in the current window).

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/wait_range.hpp"
#include "engine/record_log.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::checks {

class SlidingCounter {
 public:
  SlidingCounter(engine::RecordView records, const AdmissionRule& rule);

  // The admission the estimate argues most against: count = the admissions surely in its two
  // windows (itself included), allowance = the most the rule admits there at its position
  // (L + prev x f, rounded up). Exceeded only when the estimate was surely >= L.
  AdmissionPeak peak() const;

  // The most the estimate can have been when `denial` was decided; a huge value when nothing
  // bounds it (the windows' phase unknown there).
  double most_used(const engine::RequestRecord& denial) const;

  // For a denial: the shortest and longest wait, in ns from its reply and from its send, until
  // the estimate drops below L - c + 1 (c its cost; L for one unit), over the windows it may
  // fall in where the estimate may have been at or above that; nullopt when in none (the
  // admissions seen leave room). Records count units: an admission of cost c is c records.
  using Wait = WaitRange;
  std::optional<Wait> wait(const engine::RequestRecord& denial) const;

  static constexpr double k_unbounded = 1e18;

 private:
  // The windows an instant in [lo, hi] may fall in (floor indices of the boundary grid).
  std::pair<int64_t, int64_t> windows_of(int64_t lo, int64_t hi) const;
  int64_t surely_in(int64_t window) const;
  int64_t surely_in_before(int64_t window, int64_t before) const;
  int64_t possibly_before(int64_t bound) const;  // admissions with lo < bound
  int64_t gone_by(int64_t bound) const;          // admissions with hi < bound
  int64_t unknown_before(int64_t bound) const;   // lost replies sent (less the clock) before it
  // The upper reading for a denial [lo, hi] in window k: the weighted estimate, and the counts
  // (prev-only, curr) it rests on.
  struct Upper {
    double estimate = 0;
    int64_t prev = 0;
    int64_t curr = 0;
  };
  Upper upper(int64_t lo, int64_t hi, int64_t window) const;
  // The first instant after which the estimate is below `limit`, the windows' start at `start`.
  double drop_instant(int64_t prev, int64_t curr, int64_t start, double limit) const;

  const AdmissionRule& rule_;
  int64_t origin_lo_ = 0;  // boundaries lie at origin + k W, origin in [lo, hi]
  int64_t origin_hi_ = 0;
  int64_t unknown_from_ = INT64_MAX;  // from here on the phase is unknown (first-hit restarts)
  std::vector<int64_t> lo_sorted_;    // each admission's earliest instant (send - clock)
  std::vector<int64_t> hi_sorted_;    // each admission's latest (reply + clock)
  std::vector<int64_t> unknown_;      // lost replies' earliest instants, sorted
  std::vector<std::pair<int64_t, int64_t>> sure_;  // (window, hi) of admissions surely in one
  struct Admission {
    int64_t lo, hi, sent, replied;
  };
  std::vector<Admission> admissions_;
};

// First come, first served under the contract: how many of `decided` (indices in `records`,
// ordered by send) a sliding-window counter admits, replayed at their send instants.
int64_t sliding_counter_admissions(engine::RecordView records, const std::vector<uint32_t>& decided,
                                   const AdmissionRule& rule);

}  // namespace rlcheck::checks
