#include "checks/first_hit.hpp"

#include <algorithm>
#include <tuple>

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

struct Span {
  int64_t lo;  // send - clock: the earliest the limiter can have decided it
  int64_t hi;  // reply + clock: the latest (unbounded for a lost reply)
  int64_t sent;
  int64_t replied;
  bool seen;  // an admission; else a request whose reply was lost, possibly admitted
};

size_t count_below(const std::vector<int64_t>& sorted, int64_t bound) {
  return static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), bound) -
                             sorted.begin());
}

}  // namespace

// Window k opens at an admission O_k in [open_lo, open_hi] and ends at E_k in [end_lo, end_hi]:
// E_k >= O_k + W, and E_k <= (the opener's reply) + W, since the expiry is set before the
// opening request is answered. So end_lo = open_lo + W, and end_hi = W + the latest reply of
// any admission that may be the opener (one possibly at or before open_hi).
// The next window opens at the first admission at or after E_k: no earlier than the first
// admission that may come after end_lo, no later than the reply of the first one surely after
// end_hi.
// An admission is surely in window k when it surely comes after the previous window's end
// (then it is at or after O_k, the first such) or surely after open_hi (then the opener, one
// more, is not among them), and surely before end_lo.
FirstHitWindows::FirstHitWindows(engine::RecordView records, const AdmissionRule& rule)
    : rule_(rule) {
  std::vector<Span> spans;
  for (const RequestRecord& record : records) {
    if (record.outcome == Outcome::allowed) {
      spans.push_back({record.sent_ns - rule.clock_ns, record.replied_ns + rule.clock_ns,
                       record.sent_ns, record.replied_ns, true});
    } else if (engine::is_unknown(record)) {
      // Its reply lost, it may have been admitted even after rlcheck gave up on it (a stalled
      // Redis runs the commands queued before it): it may have opened a window, and may count
      // in one, but never counts as an admission.
      spans.push_back(
          {record.sent_ns - rule.clock_ns, k_unbounded, record.sent_ns, record.replied_ns, false});
    }
  }
  // By lo, and equal lo by every other field: the windows never depend on the records' order.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.lo, a.hi, a.sent, a.replied, a.seen) <
           std::tie(b.lo, b.hi, b.sent, b.replied, b.seen);
  });
  const size_t n = spans.size();
  for (const Span& span : spans) {
    lo_sorted_.push_back(span.lo);
    hi_sorted_.push_back(span.hi);
  }
  std::sort(hi_sorted_.begin(), hi_sorted_.end());
  if (n == 0 || rule.window_ns <= 0)
    return;

  // Openings are bounded above only by admissions seen; lost replies may open earlier and end
  // later, never prove an opening.
  std::vector<int64_t> prefix_max_hi(n);
  std::vector<int64_t> suffix_min_hi(n + 1, k_unbounded);
  std::vector<size_t> lost_before(n + 1, 0);  // lost replies among the first i by lo
  for (size_t i = 0; i < n; ++i) {
    prefix_max_hi[i] = std::max(i == 0 ? spans[i].hi : prefix_max_hi[i - 1], spans[i].hi);
    lost_before[i + 1] = lost_before[i] + (spans[i].seen ? 0 : 1);
  }
  for (size_t i = n; i-- > 0;)
    suffix_min_hi[i] = std::min(suffix_min_hi[i + 1], spans[i].seen ? spans[i].hi : k_unbounded);

  const int64_t window = rule.window_ns;
  // A limiter that may hold state from before the run may have opened its first window up to a
  // window before it: the first window's opening is then anywhere from there on, and it may
  // not be among the admissions seen.
  int64_t open_lo = rule.fresh_state ? spans[0].lo : std::min<int64_t>(spans[0].lo, 0) - window;
  int64_t open_hi = suffix_min_hi[0];
  int64_t previous_end_hi = -k_unbounded;
  bool opener_seen = rule.fresh_state;
  size_t first_possibly_after = 0;  // the first admission (by lo) whose hi reaches end_lo
  while (true) {
    FirstHitWindow current;
    current.open_lo = open_lo;
    current.open_hi = open_hi;
    current.end_lo = open_lo + window;
    bool opener_may_be_lost = false;
    if (open_hi >= k_unbounded) {
      current.end_hi = k_unbounded;
    } else {
      const size_t openers = count_below(lo_sorted_, open_hi + 1);
      int64_t latest = openers > 0 ? prefix_max_hi[openers - 1] : open_hi;
      if (!opener_seen)
        latest = std::max<int64_t>(latest, 0);
      current.end_hi = latest >= k_unbounded ? k_unbounded : latest + window;
      opener_may_be_lost = lost_before[openers] > lost_before[first_possibly_after];
    }
    // Counted two ways, each sound; the larger is kept. The opener is one more only when it
    // is an admission seen, not a lost reply.
    int64_t after_previous = 0, after_opener = opener_seen && !opener_may_be_lost ? 1 : 0;
    int64_t first_sent = INT64_MAX, last_replied = INT64_MIN;
    const size_t begin = count_below(lo_sorted_, previous_end_hi);
    for (size_t i = begin; i < n && spans[i].lo < current.end_lo; ++i) {
      if (!spans[i].seen || spans[i].hi >= current.end_lo)
        continue;
      ++after_previous;
      after_opener += spans[i].lo > open_hi ? 1 : 0;
      first_sent = std::min(first_sent, spans[i].sent);
      last_replied = std::max(last_replied, spans[i].replied);
    }
    current.surely_in = std::max(after_previous, after_opener);
    current.first_sent_ns = first_sent == INT64_MAX ? open_lo + rule.clock_ns : first_sent;
    current.last_replied_ns = last_replied == INT64_MIN ? current.first_sent_ns : last_replied;
    windows_.push_back(current);
    if (current.end_hi >= k_unbounded)
      break;
    while (first_possibly_after < n && spans[first_possibly_after].hi < current.end_lo)
      ++first_possibly_after;
    if (first_possibly_after == n)
      break;  // no admission can have opened another window
    open_lo = std::max(current.end_lo, spans[first_possibly_after].lo);
    open_hi = suffix_min_hi[count_below(lo_sorted_, current.end_hi)];
    previous_end_hi = current.end_hi;
    opener_seen = true;
  }
  place_full_instants();
}

void FirstHitWindows::place_full_instants() {
  for (FirstHitWindow& window : windows_) {
    const size_t gone = count_below(hi_sorted_, window.open_lo);
    const size_t limit_th = gone + static_cast<size_t>(std::max<int64_t>(1, rule_.limit)) - 1;
    window.full_from = limit_th < lo_sorted_.size() ? lo_sorted_[limit_th] : k_unbounded;
  }
}

AdmissionPeak FirstHitWindows::peak() const {
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(rule_.limit);
  bool first = true;
  for (const FirstHitWindow& window : windows_) {
    if (first || window.surely_in > peak.count) {
      peak.count = window.surely_in;
      peak.start_ns = window.first_sent_ns;
      peak.length_ns = std::max<int64_t>(0, window.last_replied_ns - window.first_sent_ns);
      first = false;
    }
  }
  return peak;
}

int64_t FirstHitWindows::possibly_in_before(const FirstHitWindow& window, int64_t before) const {
  // Possibly in the window: at or after its opening (hi >= open_lo) and before its end
  // (lo < end_hi); possibly before `before`: lo < before. With before <= end_hi and
  // open_lo <= before, every admission with hi < open_lo also has lo < before.
  const int64_t bound = std::min(window.end_hi, before);
  const size_t reached = count_below(lo_sorted_, bound);
  const size_t gone = count_below(hi_sorted_, window.open_lo);
  return static_cast<int64_t>(reached - std::min(reached, gone));
}

std::pair<size_t, size_t> FirstHitWindows::windows_touching(int64_t lo, int64_t hi) const {
  const auto first = std::partition_point(windows_.begin(), windows_.end(),
                                          [&](const FirstHitWindow& w) { return w.end_hi <= lo; });
  const auto last = std::partition_point(first, windows_.end(),
                                         [&](const FirstHitWindow& w) { return w.open_lo <= hi; });
  return {static_cast<size_t>(first - windows_.begin()),
          static_cast<size_t>(last - windows_.begin())};
}

int64_t FirstHitWindows::used_before(const RequestRecord& denial, int64_t enough) const {
  const int64_t lo = denial.sent_ns - rule_.clock_ns;
  const int64_t hi = denial.replied_ns + rule_.clock_ns;
  const auto [first, last] = windows_touching(lo, hi);
  int64_t used = 0;
  for (size_t k = first; k < last && used < enough; ++k) {
    // Full is all a denial's judgement needs to know: count only below that.
    if (enough <= rule_.limit && may_be_full_before(windows_[k], hi))
      return std::max(used, rule_.limit);
    used = std::max(used, possibly_in_before(windows_[k], hi));
  }
  return used;
}

std::optional<FirstHitWindows::Wait> FirstHitWindows::wait(const RequestRecord& denial) const {
  const int64_t lo = denial.sent_ns - rule_.clock_ns;
  const int64_t hi = denial.replied_ns + rule_.clock_ns;
  const auto [first, last] = windows_touching(lo, hi);
  std::optional<Wait> wait;
  for (size_t k = first; k < last; ++k) {
    const FirstHitWindow& window = windows_[k];
    if (!may_be_full_before(window, hi))
      continue;
    const auto low = static_cast<double>(window.end_lo - denial.replied_ns);
    const auto high = static_cast<double>(window.end_hi - denial.sent_ns);
    widen(wait, low, high);
  }
  return from_now(wait);
}

int64_t first_hit_admissions(engine::RecordView records, const std::vector<uint32_t>& decided,
                             const AdmissionRule& rule) {
  int64_t admitted = 0;
  bool open = false;
  int64_t end_ns = 0;
  int64_t in_window = 0;
  for (const uint32_t index : decided) {
    const int64_t sent_ns = records.sent_ns(index);
    if (!open || sent_ns >= end_ns) {
      open = true;
      end_ns = sent_ns + rule.window_ns;
      in_window = 0;
    }
    if (in_window < rule.limit) {
      ++in_window;
      ++admitted;
    }
  }
  return admitted;
}

}  // namespace rlcheck::checks
