#include "checks/queue_audit.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::audit_queue;
using rlcheck::checks::find_lockouts;
using rlcheck::checks::IdentityRecords;
using rlcheck::checks::QueueAudit;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

// The bucket a queue of `depth` at `per_s` is to its arrivals: depth + 1, refilled at per_s.
AdmissionRule arrivals(int64_t depth, double per_s) {
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::bucket;
  rule.burst = depth + 1;
  rule.tokens_per_ns = per_s / 1e9;
  rule.clock_ns = k_ms;
  return rule;
}

struct Queue {
  int64_t depth = 5;
  double per_s = 20;
  bool nodelay = false;       // admits as the queue would, but lets each go at once
  int64_t hold_extra_ms = 0;  // a broken one: every wait this much longer
  int64_t latency_ms = 2;     // the network's, both ways
};

// Requests sent at `sent_ms[i]`, through a FIFO queue as nginx's limit_req keeps it: one
// departure every 1 / per_s at most; a request is denied when `depth` already wait, answered
// at once.
std::vector<RequestRecord> drive(const Queue& queue, const std::vector<int64_t>& sent_ms) {
  std::vector<RequestRecord> records;
  const double gap_ns = 1e9 / queue.per_s;
  double next_free_ns = 0;
  for (size_t i = 0; i < sent_ms.size(); ++i) {
    RequestRecord r;
    r.seq = i;
    r.sent_ns = sent_ms[i] * k_ms;
    const double arrive = static_cast<double>(r.sent_ns + queue.latency_ms * k_ms / 2);
    next_free_ns = std::max(next_free_ns, arrive);
    const double wait = next_free_ns - arrive;
    if (wait > static_cast<double>(queue.depth) * 1e9 / queue.per_s + 1) {
      r.outcome = Outcome::denied;
      r.replied_ns = r.sent_ns + queue.latency_ms * k_ms;
    } else {
      r.outcome = Outcome::allowed;
      const auto held = queue.nodelay ? 0 : static_cast<int64_t>(wait);
      r.replied_ns = r.sent_ns + queue.latency_ms * k_ms + held + queue.hold_extra_ms * k_ms;
      next_free_ns += gap_ns;
    }
    records.push_back(r);
  }
  return records;
}

std::vector<int64_t> burst(int count) {
  return std::vector<int64_t>(static_cast<size_t>(count), 0);
}

// One request every `every_ms` until `until_ms`.
std::vector<int64_t> steady(int64_t every_ms, int64_t until_ms) {
  std::vector<int64_t> sent;
  for (int64_t t = 0; t < until_ms; t += every_ms)
    sent.push_back(t);
  return sent;
}

QueueAudit audit(const std::vector<RequestRecord>& records, int64_t depth, double per_s) {
  const IdentityRecords identities{records};
  return audit_queue(identities, arrivals(depth, per_s), depth);
}

}  // namespace

TEST_CASE("queue audit: a correct queue's burst leaves one at a time and waits at most B / R") {
  const auto records = drive(Queue{}, burst(30));
  CHECK(std::count_if(records.begin(), records.end(),
                      [](const RequestRecord& r) { return r.outcome == Outcome::allowed; }) == 6);
  const QueueAudit queue = audit(records, 5, 20);
  CHECK_FALSE(queue.departures.exceeded());
  CHECK(queue.promised_wait_ns == 250 * k_ms);
  REQUIRE(queue.longest.has_value());
  CHECK(queue.longest->wait_ns == 252 * k_ms);  // 5 x 50 ms, plus the network
  CHECK(queue.unloaded_ns == 2 * k_ms);         // the denials' latency
  CHECK_FALSE(queue.waited_too_long());
}

TEST_CASE("queue audit: an open load at three times the rate keeps the queue's promise") {
  const auto records = drive(Queue{}, steady(17, 3000));
  const QueueAudit queue = audit(records, 5, 20);
  CHECK_FALSE(queue.departures.exceeded());
  CHECK_FALSE(queue.waited_too_long());
  // Denied only when the queue was full: no lock-out under the arrivals' bucket.
  const IdentityRecords identities{records};
  CHECK(find_lockouts(identities, arrivals(5, 20), 0, 0).count == 0);
}

TEST_CASE("queue audit: a queue that lets its burst go at once (nodelay) breaks the departures") {
  Queue fast;
  fast.nodelay = true;  // a token bucket of B + 1
  const QueueAudit queue = audit(drive(fast, burst(30)), 5, 20);
  CHECK(queue.departures.exceeded());
  CHECK(queue.departures.count == 6);
  CHECK_FALSE(queue.waited_too_long());
}

TEST_CASE("queue audit: a queue deeper or slower than claimed waits too long") {
  SUBCASE("deeper: 10 wait where 2 are promised") {
    Queue deep;
    deep.depth = 10;
    const QueueAudit queue = audit(drive(deep, burst(30)), 2, 20);
    CHECK(queue.waited_too_long());
    CHECK(queue.excess_wait_ns() == 400 * k_ms);
  }
  SUBCASE("slower: 10/s where 20/s is promised") {
    Queue slow;
    slow.per_s = 10;
    const QueueAudit queue = audit(drive(slow, burst(30)), 5, 20);
    CHECK(queue.waited_too_long());
    CHECK_FALSE(queue.departures.exceeded());
  }
  SUBCASE("late within tolerance: 80 ms beyond the promise is jitter, not a fail") {
    Queue late;
    late.hold_extra_ms = 80;
    CHECK_FALSE(audit(drive(late, burst(30)), 5, 20).waited_too_long());
  }
}

TEST_CASE("queue audit: the unloaded latency is the denials' 99th percentile, else the fastest") {
  Queue slow_network;
  slow_network.latency_ms = 40;
  CHECK(audit(drive(slow_network, burst(30)), 5, 20).unloaded_ns == 40 * k_ms);
  // Nothing denied: the fastest reply (the first, which never waited).
  CHECK(audit(drive(slow_network, burst(4)), 5, 20).unloaded_ns == 40 * k_ms);
}

namespace {

// nginx's limit_req with burst=B delay=K, in its own arithmetic: excess in thousandths of a
// request, leaked at the rate over whole milliseconds; a fresh key's first request has excess 0;
// past B a request is denied (and changes nothing), else it leaves at once while its excess is
// at most K, or (excess - K) / R later (ms, rounded down).
std::vector<RequestRecord> drive_nginx(int64_t burst, int64_t delay, int64_t per_s,
                                       const std::vector<int64_t>& sent_ms,
                                       int64_t latency_ms = 2) {
  std::vector<RequestRecord> records;
  bool fresh = true;
  int64_t excess = 0, last_ms = 0;
  for (size_t i = 0; i < sent_ms.size(); ++i) {
    RequestRecord r;
    r.seq = i;
    r.sent_ns = sent_ms[i] * k_ms;
    const int64_t now = sent_ms[i] + latency_ms / 2;
    int64_t e = 0;
    if (!fresh)
      e = std::max<int64_t>(0, excess - per_s * 1000 * (now - last_ms) / 1000 + 1000);
    if (e > burst * 1000) {
      r.outcome = Outcome::denied;
      r.replied_ns = r.sent_ns + latency_ms * k_ms;
    } else {
      fresh = false;
      excess = e;
      last_ms = now;
      const int64_t held_ms = e <= delay * 1000 ? 0 : (e - delay * 1000) / per_s;
      r.outcome = Outcome::allowed;
      r.replied_ns = r.sent_ns + (latency_ms + held_ms) * k_ms;
    }
    records.push_back(r);
  }
  return records;
}

QueueAudit audit_nodelay(const std::vector<RequestRecord>& records, int64_t depth, double per_s,
                         int64_t nodelay) {
  const IdentityRecords identities{records};
  return audit_queue(identities, arrivals(depth, per_s), depth, nodelay);
}

int64_t count_allowed(const std::vector<RequestRecord>& records) {
  return std::count_if(records.begin(), records.end(),
                       [](const RequestRecord& r) { return r.outcome == Outcome::allowed; });
}

}  // namespace

TEST_CASE("queue audit: nginx's burst=5 delay=2 keeps queue:20/s,5,nodelay=2") {
  const auto records = drive_nginx(5, 2, 20, burst(30));
  CHECK(count_allowed(records) == 6);  // excess 0 to 5
  const QueueAudit queue = audit_nodelay(records, 5, 20, 2);
  CHECK(queue.nodelay == 2);
  CHECK(queue.promised_wait_ns == 150 * k_ms);  // (5 - 2) / 20/s
  // Three leave at once: 1 + K, the most the departures allow in an instant.
  CHECK_FALSE(queue.departures.exceeded());
  REQUIRE(queue.longest.has_value());
  CHECK(queue.longest->wait_ns == 152 * k_ms);
  CHECK_FALSE(queue.waited_too_long());
  // An open load at three times the rate, over several drains.
  const auto open = drive_nginx(5, 2, 20, steady(17, 3000));
  const QueueAudit steady_queue = audit_nodelay(open, 5, 20, 2);
  CHECK_FALSE(steady_queue.departures.exceeded());
  CHECK_FALSE(steady_queue.waited_too_long());
}

TEST_CASE(
    "queue audit: the undelayed part's edge: delay=K judged as K - 1 or as no undelayed part") {
  const auto records = drive_nginx(5, 2, 20, burst(30));
  // One more left at once than K = 1 allows.
  const QueueAudit one = audit_nodelay(records, 5, 20, 1);
  CHECK(one.departures.exceeded());
  // As a plain queue: three departures at once, where one may leave.
  const QueueAudit plain = audit_nodelay(records, 5, 20, 0);
  CHECK(plain.departures.exceeded());
  // Its waits are shorter than a plain queue's, so delay holds.
  CHECK_FALSE(plain.waited_too_long());
}

TEST_CASE("queue audit: nodelay=K leaves (B - K) / R to wait; a queue holding longer fails delay") {
  // nginx's queue with no undelayed part judged as nodelay=3: its fifth waits 250 ms where
  // (5 - 3) / 20/s = 100 ms is promised.
  const QueueAudit queue = audit_nodelay(drive_nginx(5, 0, 20, burst(30)), 5, 20, 3);
  CHECK(queue.promised_wait_ns == 100 * k_ms);
  CHECK(queue.waited_too_long());
  CHECK_FALSE(queue.departures.exceeded());
  // nodelay=B: a token bucket of B + 1, nothing waits.
  const QueueAudit all = audit_nodelay(drive_nginx(5, 5, 20, burst(30)), 5, 20, 5);
  CHECK(all.promised_wait_ns == 0);
  CHECK_FALSE(all.departures.exceeded());
  CHECK_FALSE(all.waited_too_long());
}
