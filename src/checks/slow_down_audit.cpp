#include "checks/slow_down_audit.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

namespace rlcheck::checks {
namespace {

constexpr int64_t k_min_delay_tolerance_ns = 100'000'000;  // a loaded machine's reply jitter
// An errored request that may have reached the limiter may have arrived any time after its send.
constexpr int64_t k_arrived_whenever_ns = std::numeric_limits<int64_t>::max() / 4;

// How many of sorted `values` are <= x (or < x when `strict`), searched outward from the last
// answer: the audit asks in send order, so each answer lies near the one before (a gallop, then
// a binary search within it).
class NearbyCount {
 public:
  NearbyCount(const std::vector<int64_t>& values, bool strict)
      : values_(&values), strict_(strict) {}

  int64_t operator()(int64_t x) {
    const std::vector<int64_t>& v = *values_;
    const size_t n = v.size();
    const auto fits = [&](size_t i) { return strict_ ? v[i] < x : v[i] <= x; };
    size_t lo = 0, hi = n;  // every index below lo fits; hi does not (or is n)
    if (at_ < n && fits(at_)) {
      lo = at_ + 1;
      for (size_t step = 1;; step *= 2) {
        const size_t probe = lo + step - 1;
        if (probe >= n)
          break;
        if (!fits(probe)) {
          hi = probe;
          break;
        }
        lo = probe + 1;
      }
    } else {
      hi = at_;
      for (size_t step = 1;; step *= 2) {
        if (hi < step)
          break;
        const size_t probe = hi - step;
        if (fits(probe)) {
          lo = probe + 1;
          break;
        }
        hi = probe;
      }
    }
    const auto first = v.begin() + static_cast<std::ptrdiff_t>(lo);
    const auto last = v.begin() + static_cast<std::ptrdiff_t>(hi);
    at_ = static_cast<size_t>(
        std::partition_point(first, last,
                             [&](int64_t value) { return strict_ ? value < x : value <= x; }) -
        v.begin());
    return static_cast<int64_t>(at_);
  }

 private:
  const std::vector<int64_t>* values_;
  bool strict_;
  size_t at_ = 0;
};

// One identity's instants, each sorted: of every request that may have reached the limiter (its
// send, and the latest it can have arrived), and of its admissions (the same arrays when every
// such request was admitted); with a counter over each for the questions the audit asks.
struct IdentityInstants {
  std::vector<int64_t> sends, latest;
  std::vector<int64_t> admitted_sends, admitted_replies;  // empty when the same as above
  int64_t first_send = 0;
  NearbyCount sent_by, arrived_by, admitted_before, admitted_from;

  explicit IdentityInstants(const RecordSpan& records)
      : sent_by(sends, false),
        arrived_by(latest, false),
        admitted_before(latest, true),
        admitted_from(sends, false) {
    first_send = k_arrived_whenever_ns;
    bool all_admitted = true;
    for (size_t i = 0; i < records.size() && all_admitted; ++i)
      all_admitted = records.outcome(i) == engine::Outcome::allowed;
    for (size_t i = 0; i < records.size(); ++i) {
      const engine::Outcome outcome = records.outcome(i);
      const int64_t sent = records.sent_ns(i);
      if (outcome == engine::Outcome::error) {
        if (!engine::is_unknown(records[i]))
          continue;
        sends.push_back(sent);
        latest.push_back(k_arrived_whenever_ns);
      } else {
        sends.push_back(sent);
        latest.push_back(records.replied_ns(i));
      }
      first_send = std::min(first_send, sent);
      if (outcome == engine::Outcome::allowed && !all_admitted) {
        admitted_sends.push_back(sent);
        admitted_replies.push_back(records.replied_ns(i));
      }
    }
    std::sort(sends.begin(), sends.end());
    std::sort(latest.begin(), latest.end());
    if (!all_admitted) {
      std::sort(admitted_sends.begin(), admitted_sends.end());
      std::sort(admitted_replies.begin(), admitted_replies.end());
      admitted_before = NearbyCount(admitted_replies, true);
      admitted_from = NearbyCount(admitted_sends, false);
    }
  }
  IdentityInstants(const IdentityInstants&) = delete;
  IdentityInstants& operator=(const IdentityInstants&) = delete;
};

int64_t window_index_of(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

// The fewest admissions surely counted in the request's window before it, plus itself.
int64_t least_position(IdentityInstants& at, const SlowDownRule& rule, int64_t sent,
                       int64_t replied, int64_t start_wall_ns, bool fresh_state) {
  const int64_t before = at.admitted_before(sent);  // surely arrived before it
  const int64_t slack = rule.clock_ns;
  int64_t outside = 0;  // of those, the ones that may lie outside its window
  switch (rule.kind) {
    case SlowDownRule::Kind::sliding:
      outside = at.admitted_from(replied - rule.window_ns + slack);
      break;
    case SlowDownRule::Kind::fixed: {
      const int64_t first = window_index_of(start_wall_ns + sent - slack, rule.window_ns);
      const int64_t last = window_index_of(start_wall_ns + replied + slack, rule.window_ns);
      if (first != last)
        return 1;  // its window is not known
      const int64_t opened = first * rule.window_ns - start_wall_ns;
      outside = at.admitted_from(opened + slack - 1);  // sent before opened + slack
      break;
    }
    case SlowDownRule::Kind::first_hit:
      // Only the run's first window is placed: it opened at the first arrival, no earlier than
      // the first send, and every request surely before one within it is within it too.
      if (!fresh_state || replied >= at.first_send + rule.window_ns - slack)
        return 1;
      break;
  }
  return std::max<int64_t>(1, before - outside + 1);
}

// The most requests possibly counted in its window up to it, itself included: every one sent
// before its reply (arrivals are ordered in real time) that may have arrived within W before it
// (the limiter's clock read to `clock_ns`); nullopt when the window may reach back before the
// run (and the state then is unknown).
std::optional<int64_t> most_position(IdentityInstants& at, const SlowDownRule& rule, int64_t sent,
                                     int64_t replied, bool fresh_state) {
  const int64_t slack = rule.clock_ns;
  const int64_t reach = sent - rule.window_ns - slack;
  if (!fresh_state && reach < at.first_send)
    return std::nullopt;
  return at.sent_by(replied) - at.arrived_by(reach);
}

bool breaches_more(const SlowDownRequest& candidate,
                   const std::optional<SlowDownRequest>& current) {
  const auto key = [](const SlowDownRequest& r) {
    return std::tuple(-r.margin_ns, r.identity, r.seq);
  };
  return !current || key(candidate) < key(*current);
}

}  // namespace

int64_t slow_down_tolerance_ns(int64_t promised_ns) {
  return std::max(k_min_delay_tolerance_ns, promised_ns / 10);
}

int64_t SlowDownRule::delay_at(int64_t position) const {
  if (position <= after)
    return 0;
  const int64_t delay = (position - after) * step_ns;
  return max_ns > 0 ? std::min(delay, max_ns) : delay;
}

SlowDownAudit audit_slow_down(const IdentityRecords& identities, const SlowDownRule& rule,
                              int64_t start_wall_ns, bool fresh_state, SlowDownPromises* promises) {
  SlowDownAudit audit;
  // Each admission's most position (0: not bounded), in the identities' order.
  std::vector<int64_t> most;
  std::vector<int64_t> undelayed;  // latencies of admissions surely among the first N
  int64_t shortest = k_arrived_whenever_ns;
  for (size_t id = 0; id < identities.size(); ++id) {
    const RecordSpan& records = identities[id];
    if (records.empty())
      continue;
    IdentityInstants at(records);
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) != engine::Outcome::allowed)
        continue;
      const int64_t sent = records.sent_ns(i);
      const int64_t replied = records.replied_ns(i);
      const int64_t latency = replied - sent;
      shortest = std::min(shortest, latency);
      const std::optional<int64_t> position = most_position(at, rule, sent, replied, fresh_state);
      most.push_back(position.value_or(0));
      if (position && *position <= rule.after)
        undelayed.push_back(latency);
      // Too little delay: even read as if it took no time at all unloaded.
      const int64_t least = least_position(at, rule, sent, replied, start_wall_ns, fresh_state);
      const int64_t promised = rule.delay_at(least);
      if (promised <= 0)
        continue;
      ++audit.judged_early;
      const int64_t tolerance = slow_down_tolerance_ns(promised);
      const SlowDownRequest request{
          static_cast<uint32_t>(id),     records.seq(i), sent, latency, least, promised, tolerance,
          promised - latency - tolerance};
      if (breaches_more(request, audit.earliest))
        audit.earliest = request;
    }
  }
  audit.unloaded_from_undelayed = !undelayed.empty();
  audit.unloaded_ns = !undelayed.empty() ? *std::max_element(undelayed.begin(), undelayed.end())
                      : shortest == k_arrived_whenever_ns ? 0
                                                          : shortest;
  size_t next = 0;
  if (promises)
    promises->starts.clear();
  for (size_t id = 0; id < identities.size(); ++id) {
    const RecordSpan& records = identities[id];
    if (promises)
      promises->starts.push_back(next);
    for (size_t i = 0; i < records.size(); ++i) {
      if (records.outcome(i) != engine::Outcome::allowed)
        continue;
      const int64_t position = most[next++];
      const int64_t sent = records.sent_ns(i);
      const int64_t latency = records.replied_ns(i) - sent;
      const int64_t extra = latency - audit.unloaded_ns;
      audit.longest_extra_ns = std::max(audit.longest_extra_ns, extra);
      if (position == 0) {
        if (promises)
          most[next - 1] = -1;
        continue;
      }
      ++audit.judged_late;
      const int64_t allowed = rule.delay_at(position);
      if (promises)
        most[next - 1] = allowed;  // the position is read: its slot now keeps the promise
      const int64_t tolerance = slow_down_tolerance_ns(allowed);
      const SlowDownRequest request{
          static_cast<uint32_t>(id),  records.seq(i), sent, latency, position, allowed, tolerance,
          extra - allowed - tolerance};
      if (breaches_more(request, audit.latest))
        audit.latest = request;
    }
  }
  if (promises) {
    promises->starts.push_back(next);
    promises->promised_ns = std::move(most);
  }
  return audit;
}

}  // namespace rlcheck::checks
