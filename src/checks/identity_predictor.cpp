#include "checks/identity_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "checks/first_hit.hpp"
#include "checks/prefix_walk.hpp"
#include "checks/sliding_counter.hpp"
#include "checks/stepped_bucket.hpp"

namespace rlcheck::checks {
// Named, not file-local: IdentityPredictor::Impl holds them (gcc warns of file-local types in
// a class a unity build sees from another file).
namespace prediction {

using engine::Outcome;
using engine::RequestRecord;

struct Instants {
  int64_t sent_ns;
  int64_t replied_ns;
};

// A token bucket replayed over admissions at one of their instants: tokens left after each.
struct BucketReplay {
  std::vector<double> tokens;  // after admission k
  std::vector<int64_t> at_ns;  // admission k's instant

  BucketReplay(const std::vector<Instants>& admissions, bool use_reply, const AdmissionRule& rule) {
    double level = static_cast<double>(rule.burst);
    int64_t last = admissions.empty() ? 0 : instant(admissions.front(), use_reply);
    for (const Instants& admission : admissions) {
      const int64_t now = instant(admission, use_reply);
      level = std::min(
          static_cast<double>(rule.burst),
          level + rule.tokens_per_ns * static_cast<double>(std::max<int64_t>(0, now - last)));
      last = now;
      level -= 1.0;
      tokens.push_back(level);
      at_ns.push_back(now);
    }
  }

  // The wait for one token from `now_ns`, with the first `count` admissions spent. The last of
  // them may be replayed after `now_ns` (at its reply, when the denial is taken at its send):
  // it still counts, and the level at `now_ns` is the level after it less the refill between
  // the two. (Reading the level after it as the level at `now_ns` credited that refill early,
  // and a queued denial's true hint looked late by it.)
  // `taken`: tokens taken right at `now_ns` besides (requests possibly admitted unseen).
  double wait_ns(size_t count, int64_t now_ns, const AdmissionRule& rule, size_t taken = 0) const {
    if (count == 0)
      return bucket_wait_ns(std::nullopt, now_ns, rule, taken);
    return bucket_wait_ns(BucketLevel{tokens[count - 1], at_ns[count - 1]}, now_ns, rule, taken);
  }

  static int64_t instant(const Instants& admission, bool use_reply) {
    return use_reply ? admission.replied_ns : admission.sent_ns;
  }
};

// The minimum send instant over a window of admissions ordered by reply whose both ends only
// move forward (denials are visited by send instant).
class SlidingMinimum {
 public:
  explicit SlidingMinimum(const std::vector<Instants>& by_reply) : by_reply_(by_reply) {}

  int64_t min_sent(size_t begin, size_t end) {
    while (pushed_ < end) {
      while (!window_.empty() && by_reply_[window_.back()].sent_ns >= by_reply_[pushed_].sent_ns)
        window_.pop_back();
      window_.push_back(pushed_++);
    }
    while (window_.front() < begin)
      window_.pop_front();
    return by_reply_[window_.front()].sent_ns;
  }

 private:
  const std::vector<Instants>& by_reply_;
  std::deque<size_t> window_;
  size_t pushed_ = 0;
};

}  // namespace prediction

using engine::Outcome;
using engine::RequestRecord;
using prediction::BucketReplay;
using prediction::Instants;
using prediction::SlidingMinimum;

class IdentityPredictor::Impl {
 public:
  Impl(RecordSpan records, const AdmissionRule& rule, int64_t start_wall_ns,
       const std::vector<int64_t>* unknown)
      : rule_(rule),
        shortest_rule_(most_admitting(rule)),
        longest_rule_(least_holding(rule)),
        start_wall_ns_(start_wall_ns) {
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) == Outcome::allowed)
        by_send_.push_back({records.sent_ns(i), records.replied_ns(i)});
    }
    // Equal sends by reply, equal replies by send: the prediction never depends on the
    // records' order (two admissions equal in both are interchangeable).
    std::sort(by_send_.begin(), by_send_.end(), [](const Instants& a, const Instants& b) {
      return std::tie(a.sent_ns, a.replied_ns) < std::tie(b.sent_ns, b.replied_ns);
    });
    by_reply_ = by_send_;
    std::sort(by_reply_.begin(), by_reply_.end(), [](const Instants& a, const Instants& b) {
      return std::tie(a.replied_ns, a.sent_ns) < std::tie(b.replied_ns, b.sent_ns);
    });
    int64_t latest = 0;
    for (const Instants& admission : by_send_) {
      latest = std::max(latest, admission.replied_ns);
      latest_reply_.push_back(latest);
    }
    unknown_ = unknown == nullptr ? unknown_sends(records) : *unknown;
    if (rule.kind == AdmissionRule::Kind::bucket) {
      sent_replay_.emplace(by_send_, false, shortest_rule_);
      reply_replay_.emplace(by_reply_, true, longest_rule_);
    }
    if (rule.kind == AdmissionRule::Kind::first_hit)
      first_hit_.emplace(records, rule);
    if (rule.kind == AdmissionRule::Kind::sliding_counter)
      counter_.emplace(records, rule);
  }

  // The predicted wait for a denial, visited in send order.
  HintRange predict(const RequestRecord& denial) {
    // Possibly before the denial: sent before its reply. Surely before: replied before its send.
    // Both counts move little from one denial to the next (sends only forward), so they are
    // walked to from the last ones rather than searched for.
    possible_ = prefix_from(possible_, by_send_,
                            [&](const Instants& a) { return a.sent_ns < denial.replied_ns; });
    sure_ = prefix_from(sure_, by_reply_,
                        [&](const Instants& a) { return a.replied_ns <= denial.sent_ns; });
    const size_t possible = possible_;
    const size_t sure = sure_;
    // Unknown requests sent before the denial's reply may have been admitted as late as it.
    const auto unknown = static_cast<size_t>(sent_before(unknown_, denial.replied_ns));
    // A request costing more than the contract ever holds can never pass: no wait is right.
    if (denial.cost > rule_.capacity())
      return {0, 0, false, true};
    HintRange range;
    switch (rule_.kind) {
      case AdmissionRule::Kind::sliding:
        range = sliding(denial, possible, sure, unknown);
        break;
      case AdmissionRule::Kind::fixed:
        range = fixed(denial);
        break;
      case AdmissionRule::Kind::bucket:
        range = bucket(denial, possible, unknown);
        break;
      case AdmissionRule::Kind::first_hit:
        range = first_hit(denial);
        break;
      case AdmissionRule::Kind::sliding_counter:
        range = sliding_counter(denial);
        break;
    }
    return widen_by_clock(range, rule_.clock_ns);
  }

 private:
  // The slot frees when the limit-th most recent admission leaves the window. The longest
  // wait counts the `unknown` requests possibly before the denial as its most recent
  // admissions, made at its reply.
  // A request of cost c waits until at most limit - c units are left in the window: until the
  // (limit - c + 1)-th most recent leaves (records count units: an admission of cost c is c).
  HintRange sliding(const RequestRecord& denial, size_t possible, size_t sure, size_t unknown) {
    const auto limit =
        static_cast<size_t>(std::max<int64_t>(1, rule_.limit - std::max(denial.cost, 1) + 1));
    const auto window = static_cast<double>(rule_.window_ns);
    HintRange range;
    range.explained = possible + unknown >= limit;
    if (possible >= limit) {
      range.high_ns = static_cast<double>(latest_reply_[possible - limit]) + window -
                      static_cast<double>(denial.sent_ns);
    }
    if (unknown > 0 && range.explained) {
      const int64_t freed =
          unknown >= limit ? denial.replied_ns : latest_reply_[possible - (limit - unknown)];
      range.high_ns = std::max(
          range.high_ns, static_cast<double>(freed) + window - static_cast<double>(denial.sent_ns));
    }
    if (sure >= limit) {
      const int64_t earliest = minimum_over(limit).min_sent(sure - limit, sure);
      range.low_ns =
          static_cast<double>(earliest) + window - static_cast<double>(denial.replied_ns);
    }
    range.high_ns = std::max(range.high_ns, 0.0);
    range.low_ns = std::min(std::max(range.low_ns, 0.0), range.high_ns);
    return range;
  }

  // The wait for one token. The shortest: the fewest admissions (a prefix by send whose every
  // member replied before the denial was sent), each as early as it can have been (its send),
  // the denial as late (its reply). The longest: the most admissions (a prefix by reply holding
  // every one sent before the denial's reply), each as late as it can have been (its reply),
  // the denial as early (its send). Pairing early with early and late with late instead
  // cancels the latencies out and narrows the range to nothing: a hint right for a denial that
  // queued long was judged early, the same hint for one answered at once exact.
  // Each of the `unknown` requests possibly before the denial may have taken a token just
  // before it, which no refill made up: the longest wait takes them from the level.
  HintRange bucket(const RequestRecord& denial, size_t possible, size_t unknown) const {
    const size_t surely_by_send = static_cast<size_t>(
        std::upper_bound(latest_reply_.begin(), latest_reply_.end(), denial.sent_ns) -
        latest_reply_.begin());
    size_t covering_by_reply = 0;
    if (possible > 0) {
      const int64_t last_reply = latest_reply_[possible - 1];
      covering_by_reply = static_cast<size_t>(
          std::upper_bound(by_reply_.begin(), by_reply_.end(), last_reply,
                           [](int64_t t, const Instants& a) { return t < a.replied_ns; }) -
          by_reply_.begin());
    }
    // A request of cost c waits for c tokens: c - 1 taken besides the one it waits for.
    const auto more = static_cast<size_t>(std::max(denial.cost, 1) - 1);
    const double smooth_shortest =
        sent_replay_->wait_ns(surely_by_send, denial.replied_ns, shortest_rule_, more);
    const double smooth_longest =
        reply_replay_->wait_ns(covering_by_reply, denial.sent_ns, longest_rule_, unknown + more);
    // Stepped: a wait of w brings K x floor(w / I) tokens at least, K x (floor(w / I) + 1) at
    // most, wherever the ticks fall; the smooth waits in steps of I (w / I = tokens needed / K)
    // round to the ticks that surely bring them, and to the fewest that may.
    double shortest = smooth_shortest;
    double longest = smooth_longest;
    if (rule_.stepped()) {
      const auto step = static_cast<double>(rule_.step_ns);
      const auto ticks = [step](double wait_ns) { return std::ceil(wait_ns / step - 1e-9); };
      shortest = std::max(0.0, (ticks(smooth_shortest) - 1) * step);
      longest = ticks(smooth_longest) * step;
    }
    return {std::min(shortest, longest), longest, smooth_longest > 0};
  }

  HintRange fixed(const RequestRecord& denial) const {
    return fixed_hint_range(denial, rule_, start_wall_ns_);
  }

  // The slot frees when the window the denial fell in (one that may have been full) ends.
  HintRange first_hit(const RequestRecord& denial) const {
    const auto wait = first_hit_->wait(denial);
    if (!wait)
      return {0, 0, false};
    return {wait->low_ns, wait->high_ns, true};
  }

  // The estimate drops below the limit (in a window the denial may fall in where it may have
  // been at the limit).
  HintRange sliding_counter(const RequestRecord& denial) const {
    const auto wait = counter_->wait(denial);
    if (!wait)
      return {0, 0, false};
    return {wait->low_ns, wait->high_ns, true};
  }

  // The sliding minimum over the last `count` admissions surely before the denial. Its ends
  // only move forward for one count (`sure` never moves back): one minimum per count a cost
  // asks for (a run's costs take a few values).
  SlidingMinimum& minimum_over(size_t count) {
    for (auto& [over, minimum] : minima_) {
      if (over == count)
        return minimum;
    }
    return minima_.emplace_back(count, SlidingMinimum(by_reply_)).second;
  }

  const AdmissionRule& rule_;
  // A stepped bucket's waits are read from the smooth buckets that bracket it
  // (checks/stepped_bucket.hpp): the shortest from the one that admits the most, the longest
  // from the one that holds the fewest tokens. A smooth bucket's are both its own.
  AdmissionRule shortest_rule_;
  AdmissionRule longest_rule_;
  int64_t start_wall_ns_;
  std::optional<FirstHitWindows> first_hit_;
  std::optional<SlidingCounter> counter_;
  std::vector<Instants> by_send_;
  std::vector<Instants> by_reply_;
  std::vector<int64_t> latest_reply_;  // by send order: the latest reply so far
  std::vector<int64_t> unknown_;       // sends of the requests possibly admitted unseen
  std::vector<std::pair<size_t, SlidingMinimum>> minima_;  // by count (minimum_over)
  std::optional<BucketReplay> sent_replay_;
  std::optional<BucketReplay> reply_replay_;
  size_t possible_ = 0;  // the last denial's admissions sent before its reply
  size_t sure_ = 0;      // and replied by its send
};

IdentityPredictor::IdentityPredictor(RecordSpan records, const AdmissionRule& rule,
                                     int64_t start_wall_ns, const std::vector<int64_t>* unknown)
    : impl_(std::make_unique<Impl>(records, rule, start_wall_ns, unknown)) {}
IdentityPredictor::IdentityPredictor(IdentityPredictor&&) noexcept = default;
IdentityPredictor& IdentityPredictor::operator=(IdentityPredictor&&) noexcept = default;
IdentityPredictor::~IdentityPredictor() = default;

HintRange IdentityPredictor::predict(const engine::RequestRecord& denial) {
  return impl_->predict(denial);
}

}  // namespace rlcheck::checks
