#pragma once
// Fixed windows that open at the first hit (`--contract fixed --anchor first-hit`: INCR +
// EXPIRE on the first request, as `limits`, Flask-Limiter and express-rate-limit stores do): a
// window opens at the first admission after the previous one ended, holds at most the limit,
// and its hints name its end.
//
// Where such windows lie is not measured: each opens at an admission that happened somewhere
// between its send and its reply, and ends a window after it (after the EXPIRE, which comes
// before the opening request's reply). So each window is placed as a range for its opening and
// a range for its end, both widened by the limiter's clock, and every audit takes the reading
// that favours the limiter: an admission counts in a window only when it surely falls in it
// (the over-admission peak), and a denial may sit in any window it possibly falls in (room,
// retry hints). The ranges come from one pass over the admissions, chained window to window.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/wait_range.hpp"
#include "engine/record_log.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::checks {

struct FirstHitWindow {
  int64_t open_lo = 0;    // its first admission happened no earlier than this
  int64_t open_hi = 0;    // ... and no later than this (k_unbounded: not bounded by what was seen)
  int64_t end_lo = 0;     // it ended no earlier than this
  int64_t end_hi = 0;     // ... and no later (k_unbounded: not bounded)
  int64_t surely_in = 0;  // admissions surely in it
  int64_t first_sent_ns = 0;    // the earliest send of those, from the run start
  int64_t last_replied_ns = 0;  // the latest reply of those
  // The earliest instant (lo) from which `limit` admissions may be in it: possibly_in_before
  // reaches the limit exactly when the bound passes it (k_unbounded: never). Lets the audits
  // ask "full?" of each denial without a search.
  int64_t full_from = 0;
};

// The windows one identity's admissions open, in order, with the queries the audits ask.
class FirstHitWindows {
 public:
  static constexpr int64_t k_unbounded = INT64_MAX / 4;

  FirstHitWindows(engine::RecordView records, const AdmissionRule& rule);

  const std::vector<FirstHitWindow>& windows() const { return windows_; }

  // The window with the most admissions over the limit (ties: the first).
  AdmissionPeak peak() const;

  // For a denial: the most admissions that may have come before it in a window it may fall
  // in (0 when no window can hold it: none was open, so the limiter had room). Stops counting
  // at `enough`.
  int64_t used_before(const engine::RequestRecord& denial, int64_t enough) const;

  // For a denial: the shortest and longest wait, in ns from its reply and its send, until the
  // end of a window it may fall in that may have been full by then; nullopt when none may
  // (the admissions seen leave room).
  using Wait = WaitRange;
  std::optional<Wait> wait(const engine::RequestRecord& denial) const;

 private:
  int64_t possibly_in_before(const FirstHitWindow& window, int64_t before) const;
  // possibly_in_before(window, before) >= the limit, in constant time.
  bool may_be_full_before(const FirstHitWindow& window, int64_t before) const {
    return window.full_from < std::min(window.end_hi, before);
  }
  // Sets each window's full_from, once the windows are placed.
  void place_full_instants();
  // The windows a span [lo, hi] may overlap: indices [first, last).
  std::pair<size_t, size_t> windows_touching(int64_t lo, int64_t hi) const;

  const AdmissionRule& rule_;
  std::vector<int64_t> lo_sorted_;  // each admission's earliest instant (send - clock), sorted
  std::vector<int64_t> hi_sorted_;  // each admission's latest instant (reply + clock), sorted
  std::vector<FirstHitWindow> windows_;
};

// First come, first served under first-hit windows: how many of `decided` (indices in
// `records`, ordered by send) the contract admits, replayed at their send instants.
int64_t first_hit_admissions(engine::RecordView records, const std::vector<uint32_t>& decided,
                             const AdmissionRule& rule);

}  // namespace rlcheck::checks
