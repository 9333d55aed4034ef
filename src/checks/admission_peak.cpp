#include "checks/admission_peak.hpp"

#include <algorithm>
#include <map>

namespace rlcheck::checks {
namespace {

struct Admission {
  int64_t sent_ns;
  int64_t latest_reply_ns;  // the latest reply among this and every earlier-sent admission
};

// Admissions by send instant, each with the running maximum of reply instants: the end of a
// span i..j can have been no later than latest_reply_ns of j.
std::vector<Admission> admissions_by_send(const std::vector<engine::RequestRecord>& records) {
  std::vector<Admission> admissions;
  for (const auto& record : records) {
    if (record.outcome == engine::Outcome::allowed) {
      admissions.push_back({record.sent_ns, record.replied_ns});
    }
  }
  std::sort(admissions.begin(), admissions.end(),
            [](const Admission& a, const Admission& b) { return a.sent_ns < b.sent_ns; });
  int64_t latest = 0;
  for (auto& admission : admissions) {
    latest = std::max(latest, admission.latest_reply_ns);
    admission.latest_reply_ns = latest;
  }
  return admissions;
}

AdmissionPeak sliding_peak(const std::vector<Admission>& admissions, const AdmissionRule& rule) {
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(rule.limit);
  size_t end = 0;  // one past the last admission surely within a window of the first
  for (size_t first = 0; first < admissions.size(); ++first) {
    end = std::max(end, first);
    while (end < admissions.size() &&
           admissions[end].latest_reply_ns - admissions[first].sent_ns < rule.window_ns) {
      ++end;
    }
    const auto count = static_cast<int64_t>(end - first);
    if (count > peak.count) {
      peak.count = count;
      peak.start_ns = admissions[first].sent_ns;
      peak.length_ns = admissions[end - 1].latest_reply_ns - admissions[first].sent_ns;
    }
  }
  return peak;
}

AdmissionPeak fixed_peak(const std::vector<engine::RequestRecord>& records,
                         const AdmissionRule& rule) {
  std::map<int64_t, std::pair<int64_t, int64_t>> per_window;  // index -> count, first send
  for (const auto& record : records) {
    if (record.outcome != engine::Outcome::allowed)
      continue;
    auto [it, inserted] = per_window.try_emplace(record.bucket, 0, record.sent_ns);
    ++it->second.first;
    it->second.second = std::min(it->second.second, record.sent_ns);
  }
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(rule.limit);
  for (const auto& [window, count_and_start] : per_window) {
    if (count_and_start.first > peak.count) {
      peak.count = count_and_start.first;
      peak.start_ns = count_and_start.second;
    }
  }
  return peak;
}

// Maximises (j - i + 1) - burst - rate * (end_j - start_i) over i <= j in one pass, keeping
// the best i - rate * start_i seen so far.
AdmissionPeak bucket_peak(const std::vector<Admission>& admissions, const AdmissionRule& rule) {
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(rule.burst);
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
    const double end_term = static_cast<double>(j + 1) -
                            rule.tokens_per_ns * static_cast<double>(admissions[j].latest_reply_ns);
    const double excess = end_term - best_start_term - static_cast<double>(rule.burst);
    if (excess > best_excess) {
      best_excess = excess;
      peak.count = static_cast<int64_t>(j + 1 - best_start);
      peak.start_ns = admissions[best_start].sent_ns;
      peak.length_ns = admissions[j].latest_reply_ns - peak.start_ns;
      peak.allowance = static_cast<double>(rule.burst) +
                       rule.tokens_per_ns * static_cast<double>(peak.length_ns);
    }
  }
  return peak;
}

}  // namespace

AdmissionPeak find_admission_peak(const std::vector<engine::RequestRecord>& records,
                                  const AdmissionRule& rule) {
  switch (rule.kind) {
    case AdmissionRule::Kind::fixed:
      return fixed_peak(records, rule);
    case AdmissionRule::Kind::bucket:
      return bucket_peak(admissions_by_send(records), rule);
    case AdmissionRule::Kind::sliding:
      break;
  }
  return sliding_peak(admissions_by_send(records), rule);
}

}  // namespace rlcheck::checks
