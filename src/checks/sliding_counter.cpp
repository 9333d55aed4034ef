#include "checks/sliding_counter.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace rlcheck::checks {
namespace {

using engine::Outcome;
using engine::RequestRecord;

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  return a - floor_div(a, b) * b;
}

int64_t count_below(const std::vector<int64_t>& sorted, int64_t bound) {
  return std::lower_bound(sorted.begin(), sorted.end(), bound) - sorted.begin();
}

// Windows an uncertain instant may fall in beyond which nothing is proved (a span of many
// windows: a reply that took longer than a window).
constexpr int64_t k_most_windows = 3;

}  // namespace

// The phase. On the clock: boundaries at k W of the limiter's wall clock. First hit: the first
// admission opens the grid (somewhere between the earliest instant any request that may have
// been admitted was sent and the earliest reply of one seen admitted); once no admission may
// have come for 2 W (both windows expired), a later one may open a new grid, so the phase is
// not known from there on. State from before the run hides the phase altogether.
SlidingCounter::SlidingCounter(engine::RecordView records, const AdmissionRule& rule)
    : rule_(rule) {
  const int64_t window = std::max<int64_t>(1, rule.window_ns);
  for (const RequestRecord& record : records) {
    if (record.outcome == Outcome::allowed) {
      admissions_.push_back({record.sent_ns - rule.clock_ns, record.replied_ns + rule.clock_ns,
                             record.sent_ns, record.replied_ns});
    } else if (engine::is_unknown(record)) {
      unknown_.push_back(record.sent_ns - rule.clock_ns);
    }
  }
  std::sort(unknown_.begin(), unknown_.end());
  // By lo, and equal lo by every other field: the phase and the peak never depend on the
  // records' order.
  std::sort(admissions_.begin(), admissions_.end(), [](const Admission& a, const Admission& b) {
    return std::tie(a.lo, a.hi, a.sent, a.replied) < std::tie(b.lo, b.hi, b.sent, b.replied);
  });
  if (!rule.first_hit_anchor) {
    origin_lo_ = origin_hi_ = floor_mod(-rule.start_wall_ns, window);
  } else if (!rule.fresh_state || admissions_.empty()) {
    origin_lo_ = 0;
    origin_hi_ = window;
  } else {
    origin_lo_ = admissions_.front().lo;
    if (!unknown_.empty())
      origin_lo_ = std::min(origin_lo_, unknown_.front());
    origin_hi_ = INT64_MAX;
    int64_t latest_lo = INT64_MIN;
    for (const Admission& admission : admissions_) {
      origin_hi_ = std::min(origin_hi_, admission.hi);
      if (latest_lo != INT64_MIN && admission.hi - latest_lo >= 2 * window) {
        unknown_from_ = admission.lo;
        break;
      }
      latest_lo = std::max(latest_lo, admission.lo);
    }
    origin_hi_ = std::min(origin_hi_, origin_lo_ + window);
  }
  for (const Admission& admission : admissions_) {
    lo_sorted_.push_back(admission.lo);
    hi_sorted_.push_back(admission.hi);
    const auto [first, last] = windows_of(admission.lo, admission.hi);
    if (first == last && admission.hi < unknown_from_)
      sure_.emplace_back(first, admission.hi);
  }
  std::sort(hi_sorted_.begin(), hi_sorted_.end());
  std::sort(sure_.begin(), sure_.end());
}

std::pair<int64_t, int64_t> SlidingCounter::windows_of(int64_t lo, int64_t hi) const {
  const int64_t window = std::max<int64_t>(1, rule_.window_ns);
  return {floor_div(lo - origin_hi_, window), floor_div(hi - origin_lo_, window)};
}

int64_t SlidingCounter::surely_in(int64_t window) const {
  return surely_in_before(window, INT64_MAX);
}

int64_t SlidingCounter::surely_in_before(int64_t window, int64_t before) const {
  const auto first = std::lower_bound(sure_.begin(), sure_.end(), std::pair{window, INT64_MIN});
  const auto last = std::lower_bound(first, sure_.end(), std::pair{window, before});
  return last - first;
}

int64_t SlidingCounter::possibly_before(int64_t bound) const {
  return count_below(lo_sorted_, bound);
}

int64_t SlidingCounter::gone_by(int64_t bound) const {
  return count_below(hi_sorted_, bound);
}

int64_t SlidingCounter::unknown_before(int64_t bound) const {
  return count_below(unknown_, bound);
}

AdmissionPeak SlidingCounter::peak() const {
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(rule_.limit);
  const int64_t window = rule_.window_ns;
  if (window <= 0)
    return peak;
  bool first = true;
  for (const Admission& admission : admissions_) {
    if (admission.hi >= unknown_from_)
      continue;
    const auto [k_first, k_last] = windows_of(admission.lo, admission.hi);
    if (k_last - k_first > 1)
      continue;
    // The placement that favours the limiter: the window giving the lowest estimate, the
    // admission as late in it as it can be (prev weighs least).
    double lowest = k_unbounded;
    int64_t prev = 0, curr = 0, chosen = k_first;
    double f = 0;
    for (int64_t k = k_first; k <= k_last; ++k) {
      const auto position = static_cast<double>(admission.hi - (origin_lo_ + k * window)) /
                            static_cast<double>(window);
      const double f_max = std::clamp(position, 0.0, 1.0);
      const int64_t p = surely_in(k - 1);
      const int64_t c = surely_in_before(k, admission.lo);
      const double estimate = static_cast<double>(p) * (1.0 - f_max) + static_cast<double>(c);
      if (estimate < lowest) {
        lowest = estimate;
        prev = p;
        curr = c;
        f = f_max;
        chosen = k;
      }
    }
    AdmissionPeak candidate;
    candidate.count = prev + curr + 1;
    candidate.allowance =
        std::ceil(static_cast<double>(rule_.limit) + static_cast<double>(prev) * f - 1e-9);
    candidate.start_ns = std::max<int64_t>(0, origin_lo_ + (chosen - (prev > 0 ? 1 : 0)) * window);
    candidate.start_ns = std::min(candidate.start_ns, admission.sent);
    candidate.length_ns = std::max<int64_t>(0, admission.replied - candidate.start_ns);
    if (first || candidate.excess() > peak.excess() + 1e-9 ||
        (std::abs(candidate.excess() - peak.excess()) <= 1e-9 && candidate.count > peak.count)) {
      peak = candidate;
      first = false;
    }
  }
  return peak;
}

SlidingCounter::Upper SlidingCounter::upper(int64_t lo, int64_t hi, int64_t k) const {
  const int64_t window = rule_.window_ns;
  const int64_t start_lo = origin_lo_ + k * window;
  const int64_t start_hi = origin_hi_ + k * window;
  const double f_min =
      std::clamp(static_cast<double>(lo - start_hi) / static_cast<double>(window), 0.0, 1.0);
  const int64_t bound = std::min(hi, start_hi + window);
  Upper reading;
  // Possibly in window k and possibly before the denial, at weight 1 (an admission that may
  // sit in either window weighs most in the current one); possibly in k - 1 only, at 1 - f.
  reading.curr = possibly_before(bound) - gone_by(start_lo) + unknown_before(hi);
  reading.prev = gone_by(start_lo) - gone_by(start_lo - window);
  reading.estimate =
      static_cast<double>(reading.prev) * (1.0 - f_min) + static_cast<double>(reading.curr);
  return reading;
}

double SlidingCounter::most_used(const RequestRecord& denial) const {
  const int64_t lo = denial.sent_ns - rule_.clock_ns;
  const int64_t hi = denial.replied_ns + rule_.clock_ns;
  if (rule_.window_ns <= 0 || hi >= unknown_from_)
    return k_unbounded;
  const auto [k_first, k_last] = windows_of(lo, hi);
  if (k_last - k_first >= k_most_windows)
    return k_unbounded;
  double most = 0;
  for (int64_t k = k_first; k <= k_last; ++k)
    most = std::max(most, upper(lo, hi, k).estimate);
  return most;
}

double SlidingCounter::drop_instant(int64_t prev, int64_t curr, int64_t start, double limit) const {
  const auto window = static_cast<double>(rule_.window_ns);
  const auto p = static_cast<double>(prev);
  const auto c = static_cast<double>(curr);
  if (c < limit) {
    if (prev == 0)
      return static_cast<double>(start);
    return static_cast<double>(start) + window * std::max(0.0, 1.0 - (limit - c) / p);
  }
  // Full for the rest of this window; in the next, curr is the previous one.
  return static_cast<double>(start) + window + window * (1.0 - limit / c);
}

std::optional<SlidingCounter::Wait> SlidingCounter::wait(const RequestRecord& denial) const {
  const int64_t lo = denial.sent_ns - rule_.clock_ns;
  const int64_t hi = denial.replied_ns + rule_.clock_ns;
  if (rule_.window_ns <= 0 || hi >= unknown_from_)
    return std::nullopt;
  const auto [k_first, k_last] = windows_of(lo, hi);
  if (k_last - k_first >= k_most_windows)
    return std::nullopt;
  const int64_t window = rule_.window_ns;
  // A request of cost c fits once the estimate is below L - c + 1 (L for one unit).
  const double below = static_cast<double>(rule_.limit - std::max(denial.cost, 1) + 1);
  std::optional<Wait> wait;
  for (int64_t k = k_first; k <= k_last; ++k) {
    const Upper reading = upper(lo, hi, k);
    if (reading.estimate < below)
      continue;
    const double earliest =
        drop_instant(surely_in(k - 1), surely_in_before(k, lo), origin_lo_ + k * window, below);
    const double latest = drop_instant(reading.prev, reading.curr, origin_hi_ + k * window, below);
    const double low = earliest - static_cast<double>(denial.replied_ns);
    const double high = latest - static_cast<double>(denial.sent_ns);
    widen(wait, low, high);
  }
  return from_now(wait);
}

int64_t sliding_counter_admissions(engine::RecordView records, const std::vector<uint32_t>& decided,
                                   const AdmissionRule& rule) {
  const int64_t window = rule.window_ns;
  if (window <= 0)
    return static_cast<int64_t>(decided.size());
  int64_t admitted = 0;
  int64_t origin = floor_mod(-rule.start_wall_ns, window);
  bool opened = !rule.first_hit_anchor;
  int64_t current = INT64_MIN, curr = 0, prev = 0;
  int64_t last_admitted = INT64_MIN;
  for (const uint32_t index : decided) {
    const int64_t sent_ns = records.sent_ns(index);
    if (rule.first_hit_anchor && (!opened || sent_ns - last_admitted >= 2 * window)) {
      opened = true;
      origin = sent_ns;
      current = INT64_MIN;
    }
    const int64_t k = floor_div(sent_ns - origin, window);
    if (k != current) {
      prev = k == current + 1 ? curr : 0;
      curr = 0;
      current = k;
    }
    const double f =
        static_cast<double>(sent_ns - origin - k * window) / static_cast<double>(window);
    if (static_cast<double>(prev) * (1.0 - f) + static_cast<double>(curr) <
        static_cast<double>(rule.limit)) {
      ++curr;
      ++admitted;
      last_admitted = sent_ns;
    }
  }
  return admitted;
}

}  // namespace rlcheck::checks
