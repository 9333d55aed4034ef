#include "checks/admission_peak.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "checks/first_hit.hpp"
#include "checks/sliding_counter.hpp"

namespace rlcheck::checks {
namespace {

struct Admission {
  int64_t sent_ns;
  int64_t replied_ns;
};

std::vector<Admission> admissions_by_send(engine::RecordView records) {
  std::vector<Admission> admissions;
  for (const auto& record : records) {
    if (record.outcome == engine::Outcome::allowed) {
      admissions.push_back({record.sent_ns, record.replied_ns});
    }
  }
  // Equal sends are ordered by reply, so the peak never depends on the records' order (two
  // admissions equal in both are interchangeable).
  std::sort(admissions.begin(), admissions.end(), [](const Admission& a, const Admission& b) {
    return std::tie(a.sent_ns, a.replied_ns) < std::tie(b.sent_ns, b.replied_ns);
  });
  return admissions;
}

// Two pointers over admissions by send instant, with a deque of the latest replies in the
// current span (the span's end is its latest reply, not any earlier-sent admission's).
AdmissionPeak sliding_peak(const std::vector<Admission>& admissions, const AdmissionRule& rule) {
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(rule.limit);
  std::deque<size_t> latest;  // indices in [first, end), replies decreasing front to back
  size_t end = 0;             // one past the last admission surely within a window of first
  for (size_t first = 0; first < admissions.size(); ++first) {
    if (!latest.empty() && latest.front() < first)
      latest.pop_front();
    if (end < first)
      end = first;
    while (end < admissions.size()) {
      const int64_t span_end = std::max(admissions[end].replied_ns,
                                        latest.empty() ? 0 : admissions[latest.front()].replied_ns);
      if (span_end - admissions[first].sent_ns >= rule.window_ns - rule.clock_ns)
        break;
      while (!latest.empty() &&
             admissions[latest.back()].replied_ns <= admissions[end].replied_ns) {
        latest.pop_back();
      }
      latest.push_back(end++);
    }
    const auto count = static_cast<int64_t>(end - first);
    if (count > peak.count) {
      peak.count = count;
      peak.start_ns = admissions[first].sent_ns;
      peak.length_ns = admissions[latest.front()].replied_ns - admissions[first].sent_ns;
    }
  }
  return peak;
}

AdmissionPeak fixed_peak(engine::RecordView records, const AdmissionRule& rule) {
  struct Window {
    int64_t count = 0;
    int64_t first_sent_ns = 0;
    int64_t last_reply_ns = 0;
  };
  std::map<int64_t, Window> per_window;  // by window index
  for (const auto& record : records) {
    if (record.outcome != engine::Outcome::allowed)
      continue;
    auto [it, inserted] =
        per_window.try_emplace(record.bucket, Window{0, record.sent_ns, record.replied_ns});
    Window& window = it->second;
    ++window.count;
    window.first_sent_ns = std::min(window.first_sent_ns, record.sent_ns);
    window.last_reply_ns = std::max(window.last_reply_ns, record.replied_ns);
  }
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(rule.limit);
  // Of windows with equal counts, the one whose first admission was sent first, then the lowest
  // index (the map's order).
  for (const auto& [index, window] : per_window) {
    if (window.count > peak.count ||
        (window.count == peak.count && window.first_sent_ns < peak.start_ns)) {
      peak.count = window.count;
      peak.start_ns = window.first_sent_ns;
      peak.length_ns = window.last_reply_ns - window.first_sent_ns;
    }
  }
  return peak;
}

// Maximises (j - i + 1) - burst - rate * (end_j - start_i) over i <= j in one pass, keeping
// the best i - rate * start_i seen so far. end_j is the latest reply of any admission sent up
// to j: at least the span's true end, so the allowance is never understated (a reply that
// overtook may hide a breach, never invent one).
AdmissionPeak bucket_peak(const std::vector<Admission>& admissions, const AdmissionRule& rule) {
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(rule.burst);
  int64_t latest_reply_ns = 0;
  double best_excess = -1e300;
  double best_start_term = 1e300;
  size_t best_start = 0;
  for (size_t j = 0; j < admissions.size(); ++j) {
    const double start_term =
        static_cast<double>(j) - rule.tokens_per_ns * static_cast<double>(admissions[j].sent_ns);
    if (start_term < best_start_term) {
      best_start_term = start_term;
      best_start = j;
    }
    latest_reply_ns = std::max(latest_reply_ns, admissions[j].replied_ns);
    const double end_term =
        static_cast<double>(j + 1) - rule.tokens_per_ns * static_cast<double>(latest_reply_ns);
    const double excess = end_term - best_start_term - static_cast<double>(rule.burst) -
                          rule.tokens_per_ns * static_cast<double>(rule.clock_ns);
    if (excess > best_excess) {
      best_excess = excess;
      peak.count = static_cast<int64_t>(j + 1 - best_start);
      peak.start_ns = admissions[best_start].sent_ns;
      peak.length_ns = latest_reply_ns - peak.start_ns;
      peak.allowance = static_cast<double>(rule.burst) +
                       rule.tokens_per_ns * static_cast<double>(peak.length_ns + rule.clock_ns);
    }
  }
  return peak;
}

}  // namespace

std::optional<AdmissionRule::Kind> contract_kind(std::string_view name) {
  if (name == "sliding")
    return AdmissionRule::Kind::sliding;
  if (name == "fixed")
    return AdmissionRule::Kind::fixed;
  if (name == "sliding-counter")
    return AdmissionRule::Kind::sliding_counter;
  // A queue, to its arrivals (its departures: checks/queue_audit).
  if (name == "token-bucket" || name == "gcra" || name == "queue")
    return AdmissionRule::Kind::bucket;
  return std::nullopt;
}

bool bucket_contract(std::string_view name) {
  return contract_kind(name) == AdmissionRule::Kind::bucket;
}

std::optional<AdmissionRule::Kind> contract_kind(std::string_view name, std::string_view anchor) {
  const auto kind = contract_kind(name);
  if (kind == AdmissionRule::Kind::fixed && anchor == "first-hit")
    return AdmissionRule::Kind::first_hit;
  return kind;
}

AdmissionPeak find_admission_peak(engine::RecordView records, const AdmissionRule& rule) {
  switch (rule.kind) {
    case AdmissionRule::Kind::fixed:
      return fixed_peak(records, rule);
    case AdmissionRule::Kind::bucket:
      return bucket_peak(admissions_by_send(records), rule);
    case AdmissionRule::Kind::first_hit: {
      // Also: a span shorter than a window meets at most two first-hit windows, so it holds at
      // most twice the limit, whatever their phase (which state from before the run hides).
      const AdmissionPeak windows = FirstHitWindows(records, rule).peak();
      AdmissionRule two_windows = rule;
      two_windows.limit = 2 * rule.limit;
      const AdmissionPeak span = sliding_peak(admissions_by_send(records), two_windows);
      return span.excess() > windows.excess() ? span : windows;
    }
    case AdmissionRule::Kind::sliding_counter:
      return SlidingCounter(records, rule).peak();
    case AdmissionRule::Kind::sliding:
      break;
  }
  return sliding_peak(admissions_by_send(records), rule);
}

}  // namespace rlcheck::checks
