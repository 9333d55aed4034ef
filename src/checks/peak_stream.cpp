#include "checks/peak_stream.hpp"

#include <algorithm>

namespace rlcheck::checks {

SlidingPeakStream::SlidingPeakStream(const AdmissionRule& rule)
    : reach_ns_(rule.window_ns - rule.clock_ns) {
  peak_.allowance = static_cast<double>(rule.limit);
}

// The batch audit extends a span from each first admission as far as it stays within a window;
// a shorter span of a valid one is valid, so the longest ending at each admission starts at the
// earliest first still valid with it, and the first longest found is the batch audit's.
void SlidingPeakStream::add(int64_t sent_ns, int64_t replied_ns) {
  const Admission admission{sent_ns, replied_ns, added_++};
  span_.push_back(admission);
  while (!latest_.empty() && latest_.back().replied_ns <= replied_ns)
    latest_.pop_back();
  latest_.push_back(admission);
  while (!span_.empty() && span_end_ns() - span_.front().sent_ns >= reach_ns_) {
    if (latest_.front().index == span_.front().index)
      latest_.pop_front();
    span_.pop_front();
  }
  const auto count = static_cast<int64_t>(span_.size());
  if (count > peak_.count) {
    peak_.count = count;
    peak_.start_ns = span_.front().sent_ns;
    peak_.length_ns = span_end_ns() - span_.front().sent_ns;
  }
}

BucketPeakStream::BucketPeakStream(const AdmissionRule& rule, std::optional<TickPhase> ticks)
    : rule_(rule), ticks_(ticks) {
  peak_.allowance = static_cast<double>(rule.burst);
}

// Smooth: the refill since the run start, the clock's resolution given at the end. Stepped:
// the ticks, the clock's resolution given at both ends.
double BucketPeakStream::brought_by_start(int64_t sent_ns) const {
  if (ticks_) {
    return static_cast<double>(rule_.step_tokens) *
           static_cast<double>(ticks_->fewest_up_to(sent_ns - rule_.clock_ns));
  }
  return rule_.tokens_per_ns * static_cast<double>(sent_ns);
}

double BucketPeakStream::brought_by_end(int64_t replied_ns) const {
  if (ticks_) {
    return static_cast<double>(rule_.step_tokens) *
           static_cast<double>(ticks_->most_up_to(replied_ns + rule_.clock_ns));
  }
  return rule_.tokens_per_ns * static_cast<double>(replied_ns + rule_.clock_ns);
}

// bucket_peak's loop, one admission at a time.
void BucketPeakStream::add(int64_t sent_ns, int64_t replied_ns) {
  const uint64_t j = count_++;
  const double start_term = static_cast<double>(j) - brought_by_start(sent_ns);
  if (start_term < best_start_term_) {
    best_start_term_ = start_term;
    best_start_ = j;
    best_start_sent_ns_ = sent_ns;
  }
  latest_reply_ns_ = std::max(latest_reply_ns_, replied_ns);
  const double end_term = static_cast<double>(j + 1) - brought_by_end(latest_reply_ns_);
  const double excess = end_term - best_start_term_ - static_cast<double>(rule_.burst);
  if (excess > best_excess_) {
    best_excess_ = excess;
    peak_.count = static_cast<int64_t>(j + 1 - best_start_);
    peak_.start_ns = best_start_sent_ns_;
    peak_.length_ns = latest_reply_ns_ - peak_.start_ns;
    peak_.allowance = static_cast<double>(rule_.burst) + brought_by_end(latest_reply_ns_) -
                      brought_by_start(best_start_sent_ns_);
  }
}

void FixedPeakStream::add(int64_t window, int64_t sent_ns, int64_t replied_ns) {
  auto [it, inserted] = windows_.try_emplace(window, Window{0, sent_ns, replied_ns, window});
  Window& entry = it->second;
  ++entry.count;
  entry.first_sent_ns = std::min(entry.first_sent_ns, sent_ns);
  entry.last_reply_ns = std::max(entry.last_reply_ns, replied_ns);
}

void FixedPeakStream::forget_before(int64_t window) {
  while (!windows_.empty() && windows_.begin()->first < window) {
    const Window& entry = windows_.begin()->second;
    if (!best_forgotten_ || better(entry, *best_forgotten_))
      best_forgotten_ = entry;
    windows_.erase(windows_.begin());
  }
}

AdmissionPeak FixedPeakStream::peak() const {
  std::optional<Window> best = best_forgotten_;
  for (const auto& [index, window] : windows_) {
    if (!best || better(window, *best))
      best = window;
  }
  AdmissionPeak peak;
  peak.allowance = static_cast<double>(limit_);
  if (best) {
    peak.count = best->count;
    peak.start_ns = best->first_sent_ns;
    peak.length_ns = best->last_reply_ns - best->first_sent_ns;
  }
  return peak;
}

}  // namespace rlcheck::checks
