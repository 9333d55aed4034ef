#include "checks/slow_down_audit.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "checks/contract_audit.hpp"

using rlcheck::checks::audit_slow_down;
using rlcheck::checks::IdentityRecords;
using rlcheck::checks::SlowDownAudit;
using rlcheck::checks::SlowDownRule;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

SlowDownRule rule(int64_t after, int64_t window_ms, int64_t step_ms, int64_t max_ms = 0,
                  SlowDownRule::Kind kind = SlowDownRule::Kind::sliding) {
  SlowDownRule r;
  r.after = after;
  r.window_ns = window_ms * k_ms;
  r.step_ns = step_ms * k_ms;
  r.max_ns = max_ms * k_ms;
  r.kind = kind;
  return r;
}

// express-slow-down over express-rate-limit's memory store: a window opens at the first hit
// and lasts `window_ms`; the k-th request of it (counted as it arrives) is answered
// (k - after) x step later, up to max; nothing is denied. Each arrives 1 ms after its send and
// is answered 1 ms after it leaves.
std::vector<RequestRecord> drive(const SlowDownRule& limiter, const std::vector<int64_t>& sent_ms,
                                 int64_t extra_ms = 0) {
  std::vector<RequestRecord> records;
  int64_t opened = -1, count = 0;
  for (size_t i = 0; i < sent_ms.size(); ++i) {
    RequestRecord r;
    r.seq = i;
    r.sent_ns = sent_ms[i] * k_ms;
    const int64_t arrived = r.sent_ns + k_ms;
    if (opened < 0 || arrived >= opened + limiter.window_ns) {
      opened = arrived;
      count = 0;
    }
    ++count;
    const int64_t delay = limiter.delay_at(count);
    r.outcome = Outcome::allowed;
    r.replied_ns = arrived + (delay > 0 ? delay + extra_ms * k_ms : 0) + k_ms;
    records.push_back(r);
  }
  return records;
}

std::vector<int64_t> burst(int count, int64_t at_ms = 0) {
  return std::vector<int64_t>(static_cast<size_t>(count), at_ms);
}

// One request every `every_ms` from `from_ms` until `until_ms`.
std::vector<int64_t> steady(int64_t every_ms, int64_t until_ms, int64_t from_ms = 0) {
  std::vector<int64_t> sent;
  for (int64_t t = from_ms; t < until_ms; t += every_ms)
    sent.push_back(t);
  return sent;
}

SlowDownAudit audit(const std::vector<RequestRecord>& records, const SlowDownRule& promise,
                    bool fresh = true) {
  const IdentityRecords identities{records};
  return audit_slow_down(identities, promise, 0, fresh);
}

}  // namespace

TEST_CASE("slow-down rule: (k - N) x D past N, capped at max") {
  const SlowDownRule r = rule(3, 1000, 100, 250);
  CHECK(r.delay_at(1) == 0);
  CHECK(r.delay_at(3) == 0);
  CHECK(r.delay_at(4) == 100 * k_ms);
  CHECK(r.delay_at(5) == 200 * k_ms);
  CHECK(r.delay_at(6) == 250 * k_ms);
  CHECK(r.delay_at(60) == 250 * k_ms);
  CHECK(rule(3, 1000, 100).delay_at(60) == 5700 * k_ms);
}

TEST_CASE("slow-down audit: a burst keeps its promise, and one delayed twice as much fails") {
  const SlowDownRule promise = rule(2, 2000, 100);
  const auto kept = audit(drive(promise, burst(10)), promise);
  CHECK(kept.judged_late == 10);
  CHECK_FALSE(kept.too_late());
  CHECK_FALSE(kept.too_early());
  CHECK(kept.longest_extra_ns >= 790 * k_ms);
  // Twice the delay per request: the tenth waited 1600 ms where at most 800 ms is allowed to
  // any of ten requests sent at once.
  const auto twice = audit(drive(rule(2, 2000, 200), burst(10)), promise);
  CHECK(twice.too_late());
  REQUIRE(twice.latest.has_value());
  CHECK(twice.latest->position == 10);
  CHECK(twice.latest->promised_ns == 800 * k_ms);
  CHECK(twice.latest->seq == 9);
}

TEST_CASE("slow-down audit: one at a time, each position is known and the delay grows") {
  const SlowDownRule promise = rule(3, 5000, 100);
  // Every 500 ms: each is answered before the next is sent, so it is surely the k-th.
  const auto records = drive(promise, steady(500, 4000));
  const auto kept = audit(records, promise);
  CHECK_FALSE(kept.too_late());
  CHECK_FALSE(kept.too_early());
  CHECK(kept.judged_early == 5);  // the 4th to the 8th were surely owed a delay
  REQUIRE(kept.earliest.has_value());
  // A limiter that delays nobody: the 8th, owed 500 ms, took 2 ms.
  const auto none = audit(drive(rule(100, 5000, 100), steady(500, 4000)), promise);
  CHECK(none.too_early());
  REQUIRE(none.earliest.has_value());
  CHECK(none.earliest->position == 8);
  CHECK(none.earliest->promised_ns == 500 * k_ms);
  CHECK_FALSE(none.too_late());
}

TEST_CASE("slow-down audit: the cap holds the delay, and a longer one fails") {
  const SlowDownRule capped = rule(2, 2000, 100, 300);
  const auto kept = audit(drive(capped, burst(12)), capped);
  CHECK_FALSE(kept.too_late());
  // The same limiter judged uncapped keeps it too (a cap only shortens).
  CHECK_FALSE(audit(drive(capped, burst(12)), rule(2, 2000, 100)).too_late());
  // Uncapped, judged capped at 300 ms: delays up to 1000 ms fail.
  const auto over = audit(drive(rule(2, 2000, 100), burst(12)), capped);
  CHECK(over.too_late());
  CHECK(over.latest->promised_ns == 300 * k_ms);
}

TEST_CASE("slow-down audit: the tolerance's edges") {
  const SlowDownRule promise = rule(2, 2000, 100);
  SUBCASE("90 ms beyond each delay is jitter") {
    CHECK_FALSE(audit(drive(promise, burst(4), 90), promise).too_late());
  }
  SUBCASE("130 ms beyond the largest delay (200 ms, tolerance 100 ms) fails") {
    CHECK(audit(drive(promise, burst(4), 130), promise).too_late());
  }
  SUBCASE("a long delay is allowed a tenth: 8 s promised, 8.7 s kept, 9 s late") {
    const SlowDownRule big = rule(1, 60000, 2000);
    CHECK_FALSE(audit(drive(big, burst(5), 700), big).too_late());
    CHECK(audit(drive(big, burst(5), 1000), big).too_late());
  }
}

TEST_CASE("slow-down audit: state from before the run is judged only on fresh state") {
  const SlowDownRule promise = rule(2, 1000, 100);
  const auto records = drive(rule(2, 1000, 300), burst(6));
  CHECK(audit(records, promise, true).too_late());
  const auto unknown = audit(records, promise, false);
  CHECK(unknown.judged_late == 0);
  CHECK_FALSE(unknown.too_late());
  // Past one window into the run, a window no longer reaches back before it.
  auto later = burst(1);
  for (int64_t t : burst(6, 1500))
    later.push_back(t);
  const auto judged = audit(drive(rule(2, 1000, 300), later), promise, false);
  CHECK(judged.judged_late == 6);
  CHECK(judged.too_late());
}

TEST_CASE("slow-down audit: first-hit and fixed windows bound the least delay by their kind") {
  const SlowDownRule first_hit = rule(2, 5000, 100, 0, SlowDownRule::Kind::first_hit);
  const auto records = drive(first_hit, steady(300, 2000));
  const auto fresh = audit(records, first_hit, true);
  CHECK(fresh.judged_early == 5);  // the 3rd to the 7th
  CHECK_FALSE(fresh.too_early());
  CHECK_FALSE(fresh.too_late());
  // Without fresh state a first-hit window cannot be placed: no least delay is owed.
  CHECK(audit(records, first_hit, false).judged_early == 0);
  // Fixed on the clock: a limiter whose windows turn every 500 ms judged as 5 s windows
  // delays too little.
  const SlowDownRule fixed = rule(2, 5000, 100, 0, SlowDownRule::Kind::fixed);
  const auto short_windows = audit(drive(rule(2, 500, 100), steady(300, 3000)), fixed);
  CHECK(short_windows.too_early());
}

TEST_CASE("slow-down audit: each admission's promise for the timeline, per identity") {
  const SlowDownRule promise = rule(3, 2000, 100);
  // One at a time every 500 ms: the k-th is surely at most k-th in its window.
  const auto one = drive(promise, steady(500, 4000));
  const auto other = drive(promise, steady(500, 1000));
  const IdentityRecords identities{one, other};
  rlcheck::checks::SlowDownPromises promises;
  const auto judged = audit_slow_down(identities, promise, 0, true, &promises);
  CHECK_FALSE(judged.too_late());
  REQUIRE(promises.starts == std::vector<size_t>{0, 8, 10});
  REQUIRE(promises.promised_ns.size() == 10);
  // Fresh state, each answered before the next is sent: the k-th is at most k-th in its window
  // (the 5th's 2 s reach back to the first send), owed 100 ms for each past 3.
  CHECK(promises.promised_ns[0] == 0);
  CHECK(promises.promised_ns[3] == 100 * k_ms);
  CHECK(promises.promised_ns[4] == 200 * k_ms);
  CHECK(promises.promised_ns[8] == 0);
  CHECK(promises.promised_ns[9] == 0);
  // Not on fresh state: the requests whose window may reach back before the run are not judged.
  rlcheck::checks::SlowDownPromises unknown;
  audit_slow_down(IdentityRecords{one}, promise, 0, false, &unknown);
  REQUIRE(unknown.promised_ns.size() == 8);
  CHECK(std::count(unknown.promised_ns.begin(), unknown.promised_ns.end(), -1) == 5);
  CHECK(unknown.promised_ns[5] >= 0);
  CHECK(rlcheck::checks::slow_down_tolerance_ns(0) == 100 * k_ms);
  CHECK(rlcheck::checks::slow_down_tolerance_ns(2000 * k_ms) == 200 * k_ms);
}
