#include "checks/lockout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "checks/first_hit.hpp"
#include "checks/prefix_walk.hpp"
#include "checks/sliding_counter.hpp"

namespace rlcheck::checks {
namespace {

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

}  // namespace

double bucket_start_term(size_t rank, int64_t replied_ns, const AdmissionRule& rule) {
  return static_cast<double>(rank) -
         rule.tokens_per_ns * static_cast<double>(replied_ns + rule.clock_ns);
}

// Room for one more: below the limit, or a whole token left (with a hair for rounding).
bool had_room(double used, double capacity, double need) {
  return used + need <= capacity + 1e-9;
}

namespace {

// Counts a denial as judged, and as a lock-out when it had `room`; true then.
bool count_judged(LockOuts& found, bool room) {
  ++found.judged;
  if (room)
    ++found.count;
  return room;
}

// Keeps `denial`, a lock-out, when it is the worst so far.
void note_lock_out(LockOuts& found, const RequestRecord& denial, uint32_t identity, double used,
                   double capacity) {
  // The most room, then the earliest send, the lowest identity, the lowest seq: one order
  // whatever order the records come in.
  const LockOut candidate{identity, denial.seq, denial.sent_ns, used, capacity, {}};
  const auto key = [](const LockOut& lock_out) {
    return std::tie(lock_out.used, lock_out.sent_ns, lock_out.identity, lock_out.seq);
  };
  if (!found.worst || key(candidate) < key(*found.worst))
    found.worst = candidate;
}

}  // namespace

void judge_denial(LockOuts& found, const RequestRecord& denial, uint32_t identity, double used,
                  double capacity, bool room) {
  if (count_judged(found, room))
    note_lock_out(found, denial, identity, used, capacity);
}

std::optional<DenialCounting> find_denial_counting(RecordSpan records, uint32_t identity,
                                                   int64_t window_ns, int64_t memory_ns) {
  if (window_ns <= 0 || memory_ns <= 0 || memory_ns == INT64_MAX)
    return std::nullopt;
  // The last admission (by reply), then the requests sent after it, in send order.
  int64_t last_admitted = INT64_MIN;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) == Outcome::allowed)
      last_admitted = std::max(last_admitted, records.replied_ns(i));
  }
  if (last_admitted == INT64_MIN)
    return std::nullopt;
  std::vector<int64_t> after;
  for (size_t i = 0; i < records.size(); ++i) {
    const int64_t sent = records.sent_ns(i);
    if (sent <= last_admitted)
      continue;
    if (records.outcome(i) != Outcome::denied)
      return std::nullopt;  // an error after it: a lost reply may have been an admission
    after.push_back(sent);
  }
  std::sort(after.begin(), after.end());
  // Long after the contract had forgotten every admission: it surely had room there.
  const int64_t forgotten = last_admitted + memory_ns + window_ns;
  const auto late =
      std::count_if(after.begin(), after.end(), [&](int64_t sent) { return sent > forgotten; });
  if (late < 2)
    return std::nullopt;
  int64_t previous = last_admitted;
  for (const int64_t sent : after) {
    if (sent - previous >= window_ns)
      return std::nullopt;  // a pause as long as a window: not a client that kept sending
    previous = sent;
  }
  DenialCounting found;
  found.identity = identity;
  found.last_admitted_ns = last_admitted;
  found.denials = static_cast<int64_t>(after.size());
  const int64_t span = after.back() - after.front();
  found.offered_per_s =
      span > 0 ? static_cast<double>(after.size() - 1) * 1e9 / static_cast<double>(span) : 0;
  return found;
}

int64_t contract_memory_ns(const AdmissionRule& rule) {
  // A sliding-window counter weighs the previous window too.
  if (rule.kind == AdmissionRule::Kind::sliding_counter)
    return 2 * rule.window_ns;
  if (rule.kind != AdmissionRule::Kind::bucket)
    return rule.window_ns;
  if (rule.tokens_per_ns <= 0)
    return INT64_MAX;
  return static_cast<int64_t>(std::ceil(static_cast<double>(rule.burst) / rule.tokens_per_ns));
}

namespace {

// Visits every judged denial (sent at or after `judge_from_ns`) of `judged` with the most of
// each part the admissions of `used` (the same identities, or the same records with denials
// read as admissions) can have used at it, less what the denial counts in `used` itself
// (`counts_self`: its units). `weighted`: a denial needs room for its cost, else for one.
// `on_judged(identity, records, index, used, capacity, room)`.
template <typename OnJudged>
void walk_denials(const IdentityRecords& judged_views, const IdentityRecords& used_views,
                  const AdmissionRule& rule, int64_t start_wall_ns, int64_t judge_from_ns,
                  bool counts_self, bool weighted, const OnJudged& on_judged) {
  for (size_t id = 0; id < judged_views.size(); ++id) {
    const RecordSpan records = judged_views[id];
    const RecordSpan admissions = id < used_views.size() ? used_views[id] : records;
    const auto identity = static_cast<uint32_t>(id);
    const auto judged = [&](size_t i) {
      return records.outcome(i) == Outcome::denied && records.sent_ns(i) >= judge_from_ns;
    };
    bool any_judged = false;
    for (size_t i = 0; i < records.size() && !any_judged; ++i)
      any_judged = judged(i);
    if (!any_judged)
      continue;
    // Only the judged denials are decoded whole.
    const auto each_judged = [&](const auto& judge_one) {
      engine::RecordCursor cursor(records);
      for (size_t i = 0; i < records.size(); ++i) {
        if (judged(i))
          judge_one(i, cursor[i]);
      }
    };
    // A request that may have been admitted unseen may have been decided any time after its
    // send: every one sent before the denial may have been just before it, in its window.
    const std::vector<int64_t> unknown = unknown_sends(records);
    const auto unseen_by = [&](int64_t replied_ns) {
      return static_cast<double>(sent_before(unknown, replied_ns + rule.clock_ns));
    };
    const auto report = [&](size_t i, double used, double capacity, bool room) {
      on_judged(identity, records, i, used, capacity, room);
    };
    // What the denial asks for, and what it counts in `used` itself.
    const auto need = [&](size_t i) {
      return weighted ? static_cast<double>(records.cost(i)) : 1.0;
    };
    const auto self = [&](size_t i) { return counts_self ? need(i) : 0.0; };
    // For rules that read a denial's instants alone: no denial is decoded.
    const auto each_judged_instants = [&](const auto& used_of, double capacity) {
      for (size_t i = 0; i < records.size(); ++i) {
        if (!judged(i))
          continue;
        const int64_t replied_ns = records.replied_ns(i);
        const double used =
            used_of(records.sent_ns(i), replied_ns) - self(i) + unseen_by(replied_ns);
        report(i, used, capacity, had_room(used, capacity, need(i)));
      }
    };
    const auto limit = static_cast<double>(rule.limit);
    switch (rule.kind) {
      case AdmissionRule::Kind::sliding: {
        SlidingRoom room(admissions, rule);
        each_judged_instants(
            [&](int64_t sent, int64_t replied) { return room.used(sent, replied); }, limit);
        break;
      }
      case AdmissionRule::Kind::fixed: {
        const FixedRoom room(admissions, rule, start_wall_ns);
        each_judged([&](size_t i, const RequestRecord& record) {
          if (const auto used = room.used(record)) {
            const double total = *used - self(i) + unseen_by(record.replied_ns);
            report(i, total, limit, had_room(total, limit, need(i)));
          }
        });
        break;
      }
      case AdmissionRule::Kind::first_hit: {
        const FirstHitWindows windows(admissions, rule);
        each_judged([&](size_t i, const RequestRecord& record) {
          const auto used = static_cast<double>(windows.used_before(record, rule.limit));
          report(i, used, limit, had_room(used, limit, need(i)));
        });
        break;
      }
      case AdmissionRule::Kind::sliding_counter: {
        // Room: the estimate, read as high as any placement makes it, below the limit less
        // the request's other units.
        const SlidingCounter counter(admissions, rule);
        each_judged([&](size_t i, const RequestRecord& record) {
          const double used = counter.most_used(record);
          report(i, used, limit, used + need(i) - 1 < limit - 1e-9);
        });
        break;
      }
      case AdmissionRule::Kind::bucket: {
        const BucketRoom room(admissions, rule);
        each_judged_instants(
            [&](int64_t sent, int64_t replied) { return room.used(sent, replied); },
            static_cast<double>(rule.burst));
        break;
      }
    }
  }
}

}  // namespace

LockOuts find_lockouts(const IdentityRecords& identities, const AdmissionRule& rule,
                       int64_t start_wall_ns, int64_t judge_from_ns) {
  LockOuts found;
  std::vector<bool> locked(identities.size(), false);
  walk_denials(identities, identities, rule, start_wall_ns, judge_from_ns, false, false,
               [&](uint32_t identity, RecordSpan records, size_t i, double used, double capacity,
                   bool room) {
                 if (!count_judged(found, room))
                   return;
                 locked[identity] = true;
                 note_lock_out(found, records[i], identity, used, capacity);
               });
  // Denials with room, all after its last admission from a client that kept sending: name
  // the pattern (the identity locked out longest).
  for (size_t id = 0; id < identities.size(); ++id) {
    if (!locked[id])
      continue;
    const auto counting = find_denial_counting(identities[id], static_cast<uint32_t>(id),
                                               rule.window_ns, contract_memory_ns(rule));
    // The most denials; of equals, the lowest identity (the first visited).
    if (counting && (!found.denial_counting || counting->denials > found.denial_counting->denials))
      found.denial_counting = counting;
  }
  return found;
}

void visit_denial_rooms(const IdentityRecords& judged, const IdentityRecords& used,
                        const AdmissionRule& rule, int64_t start_wall_ns, int64_t judge_from_ns,
                        bool used_counts_denials, bool weighted, const DenialRoomVisitor& visit) {
  walk_denials(judged, used, rule, start_wall_ns, judge_from_ns, used_counts_denials, weighted,
               [&](uint32_t, RecordSpan records, size_t i, double used_now, double capacity,
                   bool room) { visit(records.seq(i), used_now, capacity, room); });
}

}  // namespace rlcheck::checks
