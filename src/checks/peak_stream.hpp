#pragma once
// The worst span of one identity's admissions, found as they come in send order with state
// bounded by what a window holds: the sliding, bucket and fixed audits of find_admission_peak,
// which feeds them a whole identity's admissions sorted by (sent, replied), and of
// StreamAudit, which feeds them a run's as they come in that order.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>

#include "checks/admission_peak.hpp"
#include "checks/stepped_bucket.hpp"

namespace rlcheck::checks {

// sliding: the longest run of admissions surely within one window. Holds the admissions from
// the earliest that can still open such a run, and the decreasing replies among them.
class SlidingPeakStream {
 public:
  explicit SlidingPeakStream(const AdmissionRule& rule);
  void add(int64_t sent_ns, int64_t replied_ns);
  const AdmissionPeak& peak() const { return peak_; }

 private:
  struct Admission {
    int64_t sent_ns;
    int64_t replied_ns;
    uint64_t index;  // its place among the identity's admissions
  };
  int64_t span_end_ns() const { return latest_.front().replied_ns; }

  int64_t reach_ns_;  // window - clock tolerance: a span this long or longer is not one window
  AdmissionPeak peak_;
  std::deque<Admission> span_;    // the current run, by send
  std::deque<Admission> latest_;  // of span_, replies decreasing front to back
  uint64_t added_ = 0;
};

// bucket: the span whose admissions most exceed burst + rate x its length, in one pass. With
// `ticks` (a stepped bucket whose ticks --anchor places): burst + K x the most ticks the phase
// allows in the span.
class BucketPeakStream {
 public:
  explicit BucketPeakStream(const AdmissionRule& rule,
                            std::optional<TickPhase> ticks = std::nullopt);
  void add(int64_t sent_ns, int64_t replied_ns);
  const AdmissionPeak& peak() const { return peak_; }

 private:
  // The tokens brought up to a span's start (as few as may be) and up to its end (as many).
  double brought_by_start(int64_t sent_ns) const;
  double brought_by_end(int64_t replied_ns) const;

  AdmissionRule rule_;
  std::optional<TickPhase> ticks_;
  AdmissionPeak peak_;
  uint64_t count_ = 0;
  int64_t latest_reply_ns_ = 0;
  double best_excess_ = -1e300;
  double best_start_term_ = 1e300;
  uint64_t best_start_ = 0;
  int64_t best_start_sent_ns_ = 0;
};

// fixed: the window index (the limiter's, or the one assign_wall_windows gives) with the most
// admissions. One entry a window that had any, until forget_before says no admission will come
// to the windows below an index: those are then weighed once and only the best is kept.
class FixedPeakStream {
 public:
  explicit FixedPeakStream(const AdmissionRule& rule) : limit_(rule.limit) {}
  void add(int64_t window, int64_t sent_ns, int64_t replied_ns);
  // The windows below `window` (and every negative one: a straddling admission's own) are
  // final.
  void forget_before(int64_t window);
  AdmissionPeak peak() const;
  size_t windows_held() const { return windows_.size(); }

 private:
  struct Window {
    int64_t count = 0;
    int64_t first_sent_ns = 0;
    int64_t last_reply_ns = 0;
    int64_t index = 0;
  };
  // fixed_peak's choice: the most admissions, then the first sent, then the lowest index.
  static bool better(const Window& a, const Window& b) {
    if (a.count != b.count)
      return a.count > b.count;
    if (a.first_sent_ns != b.first_sent_ns)
      return a.first_sent_ns < b.first_sent_ns;
    return a.index < b.index;
  }
  int64_t limit_;
  std::map<int64_t, Window> windows_;
  std::optional<Window> best_forgotten_;
};

}  // namespace rlcheck::checks
