#include "checks/room_readers.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "checks/first_hit.hpp"
#include "checks/lockout.hpp"
#include "checks/prefix_walk.hpp"
#include "checks/sliding_counter.hpp"

namespace rlcheck::checks {
// Named, not file-local: IdentityRoom::Impl holds them (gcc warns of file-local types in a
// class a unity build sees from another file).
namespace room {

using engine::Outcome;
using engine::RequestRecord;

// The admissions of one identity, sorted two ways for counting by binary search.
struct Admissions {
  std::vector<int64_t> sent;     // sorted
  std::vector<int64_t> replied;  // sorted

  explicit Admissions(RecordSpan records) {
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) == Outcome::allowed) {
        sent.push_back(records.sent_ns(i));
        replied.push_back(records.replied_ns(i));
      }
    }
    std::sort(sent.begin(), sent.end());
    std::sort(replied.begin(), replied.end());
  }

  // Admissions that may have come before a denial replied at `replied_ns`.
  size_t possibly_before(int64_t replied_ns, int64_t clock_ns) const {
    return static_cast<size_t>(std::lower_bound(sent.begin(), sent.end(), replied_ns + clock_ns) -
                               sent.begin());
  }

  size_t replied_by(int64_t at_ns) const {
    return static_cast<size_t>(std::upper_bound(replied.begin(), replied.end(), at_ns) -
                               replied.begin());
  }
};

// Sliding: the admissions possibly before the denial, less those surely out of the window when
// it was decided (even read at their reply, plus the clock, before the denial's send).
// Denials asked in record order (near send order): each count is walked to from the last.
class SlidingRoom {
 public:
  SlidingRoom(RecordSpan records, const AdmissionRule& rule) : admissions_(records), rule_(rule) {}

  double used(int64_t sent_ns, int64_t replied_ns) {
    const int64_t possibly_by = replied_ns + rule_.clock_ns;
    before_ = prefix_from(before_, admissions_.sent, [&](int64_t t) { return t < possibly_by; });
    const int64_t gone_by = sent_ns - rule_.window_ns - rule_.clock_ns;
    gone_ = prefix_from(gone_, admissions_.replied, [&](int64_t t) { return t <= gone_by; });
    return static_cast<double>(before_ - std::min(before_, gone_));
  }

 private:
  Admissions admissions_;
  const AdmissionRule& rule_;
  size_t before_ = 0;  // the last denial's admissions possibly before it
  size_t gone_ = 0;    // and surely out of its window
};

// Fixed: the admissions possibly before the denial in the window it surely fell in. An
// admission that may sit on either side of a boundary counts in both.
class FixedRoom {
 public:
  FixedRoom(RecordSpan records, const AdmissionRule& rule, int64_t start_wall_ns)
      : rule_(rule), start_wall_ns_(start_wall_ns) {
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) != Outcome::allowed)
        continue;
      const RequestRecord record = records[i];
      const auto [first, last] = windows_of(record);
      for (int64_t window = first; window <= last; ++window)
        sent_by_window_[window].push_back(record.sent_ns);
    }
    for (auto& [window, sent] : sent_by_window_)
      std::sort(sent.begin(), sent.end());
  }

  // nullopt: the denial may sit on either side of a boundary.
  std::optional<double> used(const RequestRecord& denial) const {
    const auto [first, last] = windows_of(denial);
    if (first != last)
      return std::nullopt;
    const auto it = sent_by_window_.find(first);
    if (it == sent_by_window_.end())
      return 0.0;
    const auto& sent = it->second;
    return static_cast<double>(
        std::lower_bound(sent.begin(), sent.end(), denial.replied_ns + rule_.clock_ns) -
        sent.begin());
  }

 private:
  // The limiter's own window index when it named one, else the wall windows its send and
  // reply (widened by the clock) fall in. Lone windows (negative) are recomputed.
  std::pair<int64_t, int64_t> windows_of(const RequestRecord& record) const {
    if (record.bucket > 0)
      return {record.bucket, record.bucket};
    return {wall_window(start_wall_ns_, record.sent_ns - rule_.clock_ns, rule_.window_ns),
            wall_window(start_wall_ns_, record.replied_ns + rule_.clock_ns, rule_.window_ns)};
  }

  const AdmissionRule& rule_;
  int64_t start_wall_ns_;
  std::map<int64_t, std::vector<int64_t>> sent_by_window_;
};

// Bucket: starting full, the level at t is min(B, min over admissions k of
// B - (admissions in [a_k, t]) + rate x (t - a_k)). Favouring the limiter, a_k is k's reply
// plus the clock, t the denial's send less the clock, and every admission possibly before the
// denial that may come after k's send counts: P - (admissions replied before k's send, less
// twice the clock), P the admissions possibly before. Each k's term is then
// B - P + rate x t + g_k, with g_k independent of the denial, so a prefix minimum over k in
// send order answers each denial by binary search.
class BucketRoom {
 public:
  BucketRoom(RecordSpan records, const AdmissionRule& rule) : admissions_(records), rule_(rule) {
    std::vector<std::pair<int64_t, int64_t>> by_send;  // sent, replied
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) == Outcome::allowed)
        by_send.emplace_back(records.sent_ns(i), records.replied_ns(i));
    }
    std::sort(by_send.begin(), by_send.end());
    double lowest = 1e300;
    for (const auto& [sent, replied] : by_send) {
      const auto replied_before =
          static_cast<double>(admissions_.replied_by(sent - 2 * rule.clock_ns - 1));
      lowest = std::min(lowest, replied_before - rule.tokens_per_ns *
                                                     static_cast<double>(replied + rule.clock_ns));
      prefix_min_.push_back(lowest);
    }
    // State from before the run may have left the bucket partly empty, but no emptier than
    // its admissions allow: the k-th admission replied took a token that the level at the start
    // and the refill until its reply (plus the clock) must have held. Each denial is bounded by
    // the admissions replied before its send (least_start).
    const auto& replied = admissions_.replied;
    double most = 0;
    for (size_t k = 0; k < replied.size(); ++k) {
      most = std::max(most, bucket_start_term(k + 1, replied[k], rule));
      least_start_.push_back(most);
    }
  }

  double used(int64_t sent_ns, int64_t replied_ns) const {
    const auto burst = static_cast<double>(rule_.burst);
    const size_t before = admissions_.possibly_before(replied_ns, rule_.clock_ns);
    double level = burst;
    if (before > 0) {
      level = burst - static_cast<double>(before) +
              rule_.tokens_per_ns * static_cast<double>(sent_ns - rule_.clock_ns) +
              prefix_min_[before - 1];
    }
    // State from before the run: the bucket may have started the run as low as its admissions
    // allow (a client that kept sending never lets it refill, so that deficit is never
    // forgotten under load).
    if (!rule_.fresh_state) {
      const size_t replied_before = admissions_.replied_by(sent_ns);
      const double start =
          replied_before == 0 ? 0.0 : std::min(burst, least_start_[replied_before - 1]);
      level = std::min(level,
                       start + rule_.tokens_per_ns * static_cast<double>(sent_ns - rule_.clock_ns) -
                           static_cast<double>(before));
    }
    return burst - std::min(burst, level);
  }

 private:
  Admissions admissions_;
  const AdmissionRule& rule_;
  std::vector<double> prefix_min_;  // min of g_k over the first k + 1 admissions by send
  // The lowest level the bucket can have started the run at, by the first k + 1 admissions
  // replied (a prefix maximum of bucket_start_term).
  std::vector<double> least_start_;
};

}  // namespace room

class IdentityRoom::Impl {
 public:
  Impl(RecordSpan judged, RecordSpan used, const AdmissionRule& rule, int64_t start_wall_ns,
       bool counts_self, bool weighted, const std::vector<int64_t>* unknown)
      : judged_(judged),
        cursor_(judged),
        rule_(rule),
        counts_self_(counts_self),
        weighted_(weighted),
        own_unknown_(unknown == nullptr ? unknown_sends(judged) : std::vector<int64_t>()),
        unknown_(unknown == nullptr ? &own_unknown_ : unknown) {
    switch (rule.kind) {
      case AdmissionRule::Kind::sliding:
        sliding_.emplace(used, rule);
        break;
      case AdmissionRule::Kind::fixed:
        fixed_.emplace(used, rule, start_wall_ns);
        break;
      case AdmissionRule::Kind::first_hit:
        first_hit_.emplace(used, rule);
        break;
      case AdmissionRule::Kind::sliding_counter:
        counter_.emplace(used, rule);
        break;
      case AdmissionRule::Kind::bucket:
        bucket_.emplace(used, rule);
        break;
    }
  }

  std::optional<DenialRoom> at(size_t i) {
    const auto limit = static_cast<double>(rule_.limit);
    switch (rule_.kind) {
      case AdmissionRule::Kind::sliding: {
        const int64_t replied_ns = judged_.replied_ns(i);
        return reading(i, sliding_->used(judged_.sent_ns(i), replied_ns), replied_ns, limit);
      }
      case AdmissionRule::Kind::fixed: {
        const engine::RequestRecord& record = cursor_[i];
        const auto used = fixed_->used(record);
        if (!used)
          return std::nullopt;
        return reading(i, *used, record.replied_ns, limit);
      }
      case AdmissionRule::Kind::first_hit: {
        const auto used = static_cast<double>(first_hit_->used_before(cursor_[i], rule_.limit));
        return DenialRoom{used, limit, had_room(used, limit)};
      }
      case AdmissionRule::Kind::sliding_counter: {
        // Room: the estimate, read as high as any placement makes it, below the limit.
        const double used = counter_->most_used(cursor_[i]);
        return DenialRoom{used, limit, used < limit - 1e-9};
      }
      case AdmissionRule::Kind::bucket: {
        const int64_t replied_ns = judged_.replied_ns(i);
        return reading(i, bucket_->used(judged_.sent_ns(i), replied_ns), replied_ns,
                       static_cast<double>(rule_.burst));
      }
    }
    return std::nullopt;
  }

 private:
  // What the admissions used, less what the denial counts itself, plus every request that may
  // have been admitted unseen: it may have been decided any time after its send, so every one
  // sent before the denial's reply may have been just before it, in its window.
  DenialRoom reading(size_t i, double admitted, int64_t replied_ns, double capacity) const {
    const double need = weighted_ ? static_cast<double>(judged_.cost(i)) : 1.0;
    const double self = counts_self_ ? need : 0.0;
    const double used =
        admitted - self + static_cast<double>(sent_before(*unknown_, replied_ns + rule_.clock_ns));
    return {used, capacity, had_room(used, capacity, need)};
  }

  RecordSpan judged_;
  engine::RecordCursor cursor_;  // denials decoded whole only for the rules that read them
  const AdmissionRule& rule_;
  bool counts_self_;
  bool weighted_;
  std::vector<int64_t> own_unknown_;
  const std::vector<int64_t>* unknown_;  // sorted sends of the requests possibly admitted unseen
  std::optional<room::SlidingRoom> sliding_;
  std::optional<room::FixedRoom> fixed_;
  std::optional<FirstHitWindows> first_hit_;
  std::optional<SlidingCounter> counter_;
  std::optional<room::BucketRoom> bucket_;
};

IdentityRoom::IdentityRoom(RecordSpan judged, RecordSpan used, const AdmissionRule& rule,
                           int64_t start_wall_ns, bool counts_self, bool weighted,
                           const std::vector<int64_t>* unknown)
    : impl_(std::make_unique<Impl>(judged, used, rule, start_wall_ns, counts_self, weighted,
                                   unknown)) {}
IdentityRoom::IdentityRoom(IdentityRoom&&) noexcept = default;
IdentityRoom& IdentityRoom::operator=(IdentityRoom&&) noexcept = default;
IdentityRoom::~IdentityRoom() = default;

std::optional<DenialRoom> IdentityRoom::at(size_t index) {
  return impl_->at(index);
}

}  // namespace rlcheck::checks
