#include "checks/hint_stream.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <tuple>
#include <utility>

namespace rlcheck::checks {

using engine::Outcome;
using engine::RequestRecord;

namespace {

using Instant = std::pair<int64_t, int64_t>;  // (replied, sent): an admission by reply
using ByReply = std::priority_queue<Instant, std::vector<Instant>, std::greater<>>;

// BucketReplay's step: the level after one more admission taken at `now_ns`.
struct BucketState {
  std::optional<BucketLevel> after;  // none taken yet: full

  void take(int64_t now_ns, const AdmissionRule& rule) {
    double level = static_cast<double>(rule.burst);
    int64_t last = now_ns;
    if (after) {
      level = after->tokens;
      last = after->at_ns;
    }
    level = std::min(
        static_cast<double>(rule.burst),
        level + rule.tokens_per_ns * static_cast<double>(std::max<int64_t>(0, now_ns - last)));
    after = BucketLevel{level - 1.0, now_ns};
  }
};

}  // namespace

struct RetryAccuracyStream::Identity {
  int64_t admissions = 0;  // come in so far, by send
  int64_t unknown = 0;     // errored requests that may have been admitted, so far
  int64_t latest_reply_ns = 0;
  // sliding: the latest reply over the first k admissions by send, for the last `limit` k.
  std::deque<int64_t> latest_replies;
  // sliding: admissions by reply not yet counted as surely before a denial, and the sends of
  // those counted, the smallest of the last `limit` first (a monotonic deque of (rank, sent)).
  ByReply unsure;
  int64_t sure = 0;
  std::deque<std::pair<int64_t, int64_t>> least_sent;
  // bucket, by send: the admissions the shortest wait has not yet passed (sent, latest reply
  // up to it), and the bucket replayed at the sends of those it has.
  std::deque<std::pair<int64_t, int64_t>> ahead;
  BucketState by_send;
  // bucket, by reply: the replay's recent levels (replied, level after), the latest replies
  // its denials still wait for (in the order they will ask), and the replay.
  BucketState by_reply;
  std::deque<std::pair<int64_t, BucketLevel>> reply_levels;
  std::deque<int64_t> waiting_for;

  // Drops the replay's levels no denial can still ask about: each asks for the last level
  // replied by the latest reply of the admissions before it, never less than the earliest
  // still waited for (or, for those to come, the latest reply so far).
  void forget_levels() {
    const int64_t floor = waiting_for.empty() ? latest_reply_ns : waiting_for.front();
    while (reply_levels.size() >= 2 && reply_levels[1].first <= floor)
      reply_levels.pop_front();
  }

  // Every record sent from `sent_ns` on is yet to come: what no later denial can need is
  // passed (surely-before counts, the replay at sends).
  void pass(int64_t sent_ns, int64_t limit, const AdmissionRule& rule, bool sliding) {
    if (sliding) {
      while (!unsure.empty() && unsure.top().first <= sent_ns) {
        const int64_t sent = unsure.top().second;
        unsure.pop();
        while (!least_sent.empty() && least_sent.back().second >= sent)
          least_sent.pop_back();
        least_sent.emplace_back(sure++, sent);
      }
      while (!least_sent.empty() && least_sent.front().first < sure - limit)
        least_sent.pop_front();
      return;
    }
    while (!ahead.empty() && ahead.front().second <= sent_ns) {
      by_send.take(ahead.front().first, rule);
      ahead.pop_front();
    }
  }
};

// A denial whose range waits for admissions still to come.
struct RetryAccuracyStream::Pending {
  int64_t at_ns = 0;  // every admission sent before this has come in
  RequestRecord denial;
  uint32_t identity = 0;
  double low_ns = 0;            // read when it came
  bool low_known = false;       // sliding: enough admissions were surely before it
  double shortest_ns = 0;       // bucket
  int64_t possible = -1;        // bucket, second step: admissions sent before its reply
  int64_t unknown = 0;          // bucket, second step
  int64_t latest_reply_ns = 0;  // bucket, second step: the latest reply of those
  bool deferred = false;        // bucket: waiting for the admissions replied by then
};

RetryAccuracyStream::RetryAccuracyStream(const AdmissionRule& rule, size_t identities,
                                         const AccuracyTolerance& tolerance)
    : rule_(rule), tolerance_(tolerance), identities_(identities) {}
RetryAccuracyStream::~RetryAccuracyStream() = default;
RetryAccuracyStream::RetryAccuracyStream(RetryAccuracyStream&&) noexcept = default;
RetryAccuracyStream& RetryAccuracyStream::operator=(RetryAccuracyStream&&) noexcept = default;

void RetryAccuracyStream::add(const RequestRecord& record, uint32_t index) {
  const bool bucket = rule_.kind == AdmissionRule::Kind::bucket;
  const bool sliding = rule_.kind == AdmissionRule::Kind::sliding;
  // The bucket replayed by reply takes every admission replied before this send: none still
  // to come can have replied before it.
  if (bucket)
    replay_before(record.sent_ns);
  settle_before(record.sent_ns);
  if (record.outcome == Outcome::denied && usable_hint_ms(record))
    grid_.add(record.sent_ns);
  Identity& state = identities_[index];
  const auto limit = std::max<int64_t>(1, rule_.limit);
  state.pass(record.sent_ns, limit, rule_, sliding);
  if (record.outcome == Outcome::allowed) {
    ++state.admissions;
    state.latest_reply_ns = std::max(state.latest_reply_ns, record.replied_ns);
    if (sliding) {
      state.latest_replies.push_back(state.latest_reply_ns);
      while (static_cast<int64_t>(state.latest_replies.size()) > limit)
        state.latest_replies.pop_front();
      state.unsure.emplace(record.replied_ns, record.sent_ns);
    }
    if (bucket) {
      state.ahead.emplace_back(record.sent_ns, state.latest_reply_ns);
      unreplayed_.push({record.replied_ns, record.sent_ns, index % identities_.size()});
    }
    return;
  }
  if (engine::is_unknown(record)) {
    ++state.unknown;
    return;
  }
  if (record.outcome != Outcome::denied || !usable_hint_ms(record))
    return;
  const auto id = static_cast<uint32_t>(index % identities_.size());
  if (rule_.kind == AdmissionRule::Kind::fixed) {
    judge_hint(accuracy_, record, id,
               widen_by_clock(fixed_hint_range(record, rule_, start_wall_ns_), rule_.clock_ns),
               tolerance_);
    return;
  }
  Pending pending;
  pending.at_ns = record.replied_ns;
  pending.denial = record;
  pending.identity = id;
  if (sliding) {
    // Surely before it: replied before its send (passed above). Its shortest wait: the least
    // send of the `limit` latest of those, leaving the window, from its reply.
    if (state.sure >= limit) {
      pending.low_known = true;
      pending.low_ns = static_cast<double>(state.least_sent.front().second + rule_.window_ns -
                                           record.replied_ns);
    }
  }
  if (bucket) {
    // Surely before it: the admissions by send up to the last whose replies all came before
    // its send (passed above), each at its send; the wait from its reply.
    pending.shortest_ns = bucket_wait_ns(state.by_send.after, record.replied_ns, rule_);
  }
  pending_.push(std::move(pending));
}

void RetryAccuracyStream::settle_before(int64_t sent_ns) {
  pending_.settle_before(sent_ns, [this](Pending pending) { settle(std::move(pending)); });
}

void RetryAccuracyStream::replay_before(int64_t at_ns) {
  while (!unreplayed_.empty() && unreplayed_.top().replied_ns < at_ns) {
    const Unreplayed next = unreplayed_.top();
    unreplayed_.pop();
    Identity& state = identities_[static_cast<uint32_t>(next.identity)];
    state.by_reply.take(next.replied_ns, rule_);
    state.reply_levels.emplace_back(next.replied_ns, *state.by_reply.after);
    state.forget_levels();
  }
}

void RetryAccuracyStream::settle(Pending pending) {
  Identity& state = identities_[pending.identity];
  const RequestRecord& denial = pending.denial;
  const auto limit = std::max<int64_t>(1, rule_.limit);
  HintRange range;
  if (rule_.kind == AdmissionRule::Kind::sliding) {
    // Possibly before it: sent before its reply. Its longest wait: the `limit`-th latest of
    // those (each at its reply, and the unknown ones as late as its reply) leaving the window,
    // from its send.
    const int64_t possible = state.admissions;
    const int64_t unknown = state.unknown;
    const auto window = static_cast<double>(rule_.window_ns);
    const auto latest_at = [&](int64_t k) {  // the latest reply over the first k + 1
      return state.latest_replies[static_cast<size_t>(
          k - (possible - static_cast<int64_t>(state.latest_replies.size())))];
    };
    range.explained = possible + unknown >= limit;
    if (possible >= limit) {
      range.high_ns = static_cast<double>(latest_at(possible - limit)) + window -
                      static_cast<double>(denial.sent_ns);
    }
    if (unknown > 0 && range.explained) {
      const int64_t freed =
          unknown >= limit ? denial.replied_ns : latest_at(possible - (limit - unknown));
      range.high_ns = std::max(
          range.high_ns, static_cast<double>(freed) + window - static_cast<double>(denial.sent_ns));
    }
    if (pending.low_known)
      range.low_ns = pending.low_ns;
    range.high_ns = std::max(range.high_ns, 0.0);
    range.low_ns = std::min(std::max(range.low_ns, 0.0), range.high_ns);
  } else {
    if (pending.possible < 0) {
      // First step: the admissions sent before its reply are in; the longest wait also needs
      // every admission replied by the latest of their replies.
      pending.possible = state.admissions;
      pending.unknown = state.unknown;
      pending.latest_reply_ns = state.latest_reply_ns;
      if (pending.possible > 0 && pending.latest_reply_ns >= pending.at_ns) {
        pending.at_ns = pending.latest_reply_ns + 1;
        state.waiting_for.push_back(pending.latest_reply_ns);
        pending.deferred = true;
        pending_.push(std::move(pending));
        return;
      }
    }
    // The longest: every admission replied by then, each at its reply, from its send.
    if (pending.deferred)
      state.waiting_for.pop_front();
    std::optional<BucketLevel> level;
    if (pending.possible > 0) {
      for (const auto& [replied, after] : state.reply_levels) {
        if (replied > pending.latest_reply_ns)
          break;
        level = after;
      }
    }
    state.forget_levels();
    const double longest =
        bucket_wait_ns(level, denial.sent_ns, rule_, static_cast<size_t>(pending.unknown));
    range = {std::min(pending.shortest_ns, longest), longest, longest > 0};
  }
  judge_hint(accuracy_, denial, pending.identity, widen_by_clock(range, rule_.clock_ns),
             tolerance_);
}

RetryAccuracy RetryAccuracyStream::finish() {
  replay_before(INT64_MAX);
  settle_before(INT64_MAX);
  std::sort(accuracy_.resolutions.begin(), accuracy_.resolutions.end());
  accuracy_.instants_off_second_grid = grid_.off();
  return accuracy_;
}

}  // namespace rlcheck::checks
