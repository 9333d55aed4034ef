#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "checks/lockout.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::contract_memory_ns;
using rlcheck::checks::find_lockouts;
using rlcheck::checks::IdentityRecords;
using rlcheck::checks::LockOuts;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord request(uint64_t seq, int64_t sent_ms, Outcome outcome, int64_t latency_ms = 1) {
  RequestRecord r;
  r.seq = seq;
  r.sent_ns = sent_ms * k_ms;
  r.replied_ns = r.sent_ns + latency_ms * k_ms;
  r.outcome = outcome;
  return r;
}

AdmissionRule sliding(int64_t limit, int64_t window_ms) {
  AdmissionRule rule;
  rule.limit = limit;
  rule.window_ns = window_ms * k_ms;
  rule.clock_ns = k_ms;
  return rule;
}

// One request every `every_ms` from 0 to `until_ms`; the first `admitted` allowed, the rest
// denied: a client locked out after its first window when admitted == limit.
std::vector<RequestRecord> steady(int64_t every_ms, int64_t until_ms, int64_t admitted) {
  std::vector<RequestRecord> records;
  for (int64_t t = 0, seq = 0; t < until_ms; t += every_ms, ++seq) {
    records.push_back(request(static_cast<uint64_t>(seq), t,
                              seq < admitted ? Outcome::allowed : Outcome::denied));
  }
  return records;
}

LockOuts lockouts(const std::vector<RequestRecord>& records, const AdmissionRule& rule,
                  int64_t judge_from_ns = 0) {
  return find_lockouts(IdentityRecords{records}, rule, 0, judge_from_ns);
}

}  // namespace

TEST_CASE("a client denied long after its admissions left the window was locked out") {
  // Limit 10 per 1 s at 40/s for 3 s: 10 admitted in the first 250 ms, then never again.
  const auto found = lockouts(steady(25, 3000, 10), sliding(10, 1000));
  CHECK(found.judged == 110);
  // From 1025 ms on (once the first admission, replied at 1 ms, has surely left the window
  // even on a millisecond clock) every denial had room: 79 of them.
  CHECK(found.count == 79);
  REQUIRE(found.worst);
  CHECK(found.worst->used == 0);
  CHECK(found.worst->capacity == 10);
  CHECK(found.worst->sent_ns == 1250 * k_ms);  // the first denial with the window empty
}

TEST_CASE("a correct sliding window's denials all had a full window") {
  // 10 admitted each second (the first 10 requests of each second), the rest denied.
  std::vector<RequestRecord> records;
  for (int64_t t = 0, seq = 0; t < 3000; t += 25, ++seq)
    records.push_back(request(static_cast<uint64_t>(seq), t,
                              (t % 1000) < 250 ? Outcome::allowed : Outcome::denied));
  const auto found = lockouts(records, sliding(10, 1000));
  CHECK(found.judged == 90);
  CHECK(found.count == 0);
  CHECK_FALSE(found.worst);
}

TEST_CASE("a request sent while the window had room but decided after it filled is no lock-out") {
  // Limit 2. Admissions sent at 0 and 5 ms; the second replies at 40 ms (slow). A request sent
  // at 10 ms, replied at 12 ms, was denied: the slow admission may have been decided first.
  std::vector<RequestRecord> records = {request(0, 0, Outcome::allowed),
                                        request(1, 5, Outcome::allowed, 35),
                                        request(2, 10, Outcome::denied, 2)};
  CHECK(lockouts(records, sliding(2, 1000)).count == 0);
  // Had the second request been denied, one admission was all the window held: both denials
  // had room.
  records[1].replied_ns = 6 * k_ms;
  records[2].sent_ns = 8 * k_ms;
  records[2].replied_ns = 9 * k_ms;
  records[1].outcome = Outcome::denied;
  const auto found = lockouts(records, sliding(2, 1000));
  CHECK(found.count == 2);
  REQUIRE(found.worst);
  CHECK(found.worst->used == 1);
}

TEST_CASE("the window's end is read as late as the limiter's clock allows") {
  // Limit 1 per 100 ms: admitted at 0 (replied at 1 ms), denied when sent at 101.5 ms: the
  // admission may have been decided at 1 ms and a millisecond clock keeps it till 102 ms.
  std::vector<RequestRecord> records = {request(0, 0, Outcome::allowed)};
  RequestRecord denial = request(1, 0, Outcome::denied);
  denial.sent_ns = 101'500'000;
  denial.replied_ns = denial.sent_ns + k_ms;
  records.push_back(denial);
  CHECK(lockouts(records, sliding(1, 100)).count == 0);
  records[1].sent_ns = 102 * k_ms;
  records[1].replied_ns = 103 * k_ms;
  CHECK(lockouts(records, sliding(1, 100)).count == 1);
}

TEST_CASE("denials before judge_from are not judged: state from before the run may explain them") {
  const auto records = steady(25, 3000, 0);  // denied throughout, as if the key was full
  CHECK(lockouts(records, sliding(10, 1000), 1000 * k_ms).judged == 80);
  CHECK(lockouts(records, sliding(10, 1000), 1000 * k_ms).count == 80);
  CHECK(lockouts(records, sliding(10, 1000), 3000 * k_ms).judged == 0);
}

TEST_CASE("a fixed window had room when fewer than the limit were admitted in it") {
  AdmissionRule fixed = sliding(2, 1000);
  fixed.kind = AdmissionRule::Kind::fixed;
  std::vector<RequestRecord> records = {
      request(0, 100, Outcome::allowed), request(1, 200, Outcome::allowed),
      request(2, 300, Outcome::denied), request(3, 1100, Outcome::allowed),
      request(4, 1200, Outcome::denied)};
  for (auto& r : records)
    r.bucket = r.sent_ns < 1000 * k_ms ? 7 : 8;  // the limiter's own window index
  const auto found = lockouts(records, fixed);
  CHECK(found.judged == 2);
  CHECK(found.count == 1);
  REQUIRE(found.worst);
  CHECK(found.worst->seq == 4);
  CHECK(found.worst->used == 1);
}

TEST_CASE("a bucket had room when a whole token had refilled, however the requests are placed") {
  AdmissionRule bucket;
  bucket.kind = AdmissionRule::Kind::bucket;
  bucket.burst = 2;
  bucket.tokens_per_ns = 10.0 / 1e9;  // one token every 100 ms
  bucket.clock_ns = k_ms;
  // Two admitted at 0 ms (empty), denied at 50 ms (half a token): justified.
  std::vector<RequestRecord> records = {request(0, 0, Outcome::allowed),
                                        request(1, 0, Outcome::allowed),
                                        request(2, 50, Outcome::denied)};
  CHECK(lockouts(records, bucket).count == 0);
  // Denied at 150 ms: at least 1.4 tokens back whatever the placement: a lock-out.
  records[2] = request(2, 150, Outcome::denied);
  const auto found = lockouts(records, bucket);
  CHECK(found.count == 1);
  REQUIRE(found.worst);
  CHECK(found.worst->used == doctest::Approx(0.53).epsilon(0.05));
  CHECK(found.worst->capacity == 2);
  // Denied at 102 ms: a token is only back if the placement favours the client: justified.
  records[2] = request(2, 102, Outcome::denied);
  CHECK(lockouts(records, bucket).count == 0);
}

TEST_CASE("state from before a run is forgotten after one window, or a bucket's full refill") {
  CHECK(contract_memory_ns(sliding(10, 1000)) == 1000 * k_ms);
  AdmissionRule bucket;
  bucket.kind = AdmissionRule::Kind::bucket;
  bucket.burst = 5;
  bucket.tokens_per_ns = 5.0 / 1e9;
  CHECK(contract_memory_ns(bucket) == 1000 * k_ms);
}

namespace {

// The stall case: limit 10 per 1 s, 40/s. The first 10 are admitted; the requests sent in
// 300-1000 ms time out (a stall), and the server runs them once it ends, at 1000 ms: they fill
// the window, so every later request up to 2000 ms is denied.
std::vector<RequestRecord> stalled(rlcheck::engine::ErrorKind kind) {
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  for (int64_t t = 0; t < 1900; t += 25, ++seq) {
    RequestRecord r = request(seq, t, t < 250 ? Outcome::allowed : Outcome::denied);
    if (t >= 300 && t < 1000) {
      r.outcome = Outcome::error;
      r.error = kind;
      r.replied_ns = r.sent_ns + 200 * k_ms;  // --timeout 200ms
    }
    records.push_back(r);
  }
  return records;
}

}  // namespace

TEST_CASE("requests that timed out may have been admitted after rlcheck gave up: no lock-out") {
  const auto found = lockouts(stalled(rlcheck::engine::ErrorKind::timeout), sliding(10, 1000));
  CHECK(found.judged > 30);
  CHECK(found.count == 0);
  // A connection lost after sending is as unknown.
  CHECK(lockouts(stalled(rlcheck::engine::ErrorKind::connection_lost), sliding(10, 1000)).count ==
        0);
}

TEST_CASE("requests that never left are no admission: the denials after them had room") {
  // The same records with the stalled requests refused before sending: nothing filled the
  // window after 1250 ms, so the denials from there on came with room.
  const auto found = lockouts(stalled(rlcheck::engine::ErrorKind::not_sent), sliding(10, 1000));
  CHECK(found.count > 0);
  REQUIRE(found.worst);
  CHECK(found.worst->used == 0);
}

TEST_CASE("unknown requests count against fixed windows and buckets too") {
  AdmissionRule fixed = sliding(10, 1000);
  fixed.kind = AdmissionRule::Kind::fixed;
  CHECK(lockouts(stalled(rlcheck::engine::ErrorKind::timeout), fixed).count == 0);
  CHECK(lockouts(stalled(rlcheck::engine::ErrorKind::not_sent), fixed).count > 0);
  AdmissionRule bucket;
  bucket.kind = AdmissionRule::Kind::bucket;
  bucket.burst = 10;
  bucket.tokens_per_ns = 10.0 / 1e9;
  bucket.clock_ns = k_ms;
  // The bucket refills one token every 100 ms, so the denials before the stall (from 250 ms)
  // came with room; judged from the stall on, the 28 unknown requests may have taken every
  // token refilled up to 1900 ms.
  const int64_t from_stall = 300 * k_ms;
  CHECK(lockouts(stalled(rlcheck::engine::ErrorKind::timeout), bucket, from_stall).count == 0);
  CHECK(lockouts(stalled(rlcheck::engine::ErrorKind::not_sent), bucket, from_stall).count > 0);
}

TEST_CASE("a bucket that may have started the run empty is not held to a full one") {
  // Burst 5, 5 tokens/s, hit at 20/s: a limiter that started the run empty admits one request
  // in four from the first; with state from before the run that is no lock-out, however long
  // the load lasts (it never lets the bucket refill).
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::bucket;
  rule.burst = 5;
  rule.tokens_per_ns = 5.0 / 1e9;
  rule.clock_ns = k_ms;
  std::vector<RequestRecord> records;
  for (int64_t t = 0, seq = 0; t < 3000; t += 50, ++seq) {
    records.push_back(
        request(static_cast<uint64_t>(seq), t, seq % 4 == 3 ? Outcome::allowed : Outcome::denied));
  }
  rule.fresh_state = false;
  CHECK(lockouts(records, rule, contract_memory_ns(rule)).count == 0);
  // Started full (a fresh key), the same denials came with tokens left.
  rule.fresh_state = true;
  CHECK(lockouts(records, rule, 0).count > 0);
}

TEST_CASE("a bucket is read no emptier at the start than what it admitted allows") {
  // Burst 5 refilled 5/s, as promised; the limiter really refills 4/s and started full: 5 at
  // once, then one every 250 ms, against requests every 100 ms for 4 s. The 7 admitted in the
  // first 607 ms prove the bucket held at least 7 - 5 x 0.608 = 3.96 at the start, so by 2 s a
  // bucket refilled 5/s has room the limiter denied.
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::bucket;
  rule.burst = 5;
  rule.tokens_per_ns = 5.0 / 1e9;
  rule.clock_ns = k_ms;
  rule.fresh_state = false;
  const auto run_of = [](double real_per_s) {
    std::vector<RequestRecord> records;
    double tokens = 5;
    int64_t last_ms = 0;
    for (int64_t t = 0, seq = 0; t < 4000; t += 100, ++seq) {
      tokens = std::min(5.0, tokens + real_per_s * static_cast<double>(t - last_ms) / 1000);
      last_ms = t;
      const bool admitted = tokens >= 1;
      if (admitted)
        tokens -= 1;
      records.push_back(
          request(static_cast<uint64_t>(seq), t, admitted ? Outcome::allowed : Outcome::denied));
    }
    return records;
  };
  const LockOuts under = lockouts(run_of(4), rule, contract_memory_ns(rule));
  CHECK(under.count > 0);
  REQUIRE(under.worst);
  CHECK(under.worst->sent_ns >= 2000 * k_ms);
  // The same bucket refilling 5/s, as promised: no denial had room.
  CHECK(lockouts(run_of(5), rule, contract_memory_ns(rule)).count == 0);
}

TEST_CASE("a client that kept sending and was never admitted again is named: denial counting") {
  // 40/s for 3 s, the first 10 admitted: from ~2.2 s on the contract surely forgot them.
  auto records = steady(25, 3000, 10);
  const LockOuts found = find_lockouts(IdentityRecords{records}, sliding(10, 1000), 0, 0);
  REQUIRE(found.denial_counting);
  CHECK(found.denial_counting->identity == 0);
  CHECK(found.denial_counting->last_admitted_ns == 226 * k_ms);
  CHECK(found.denial_counting->denials == 110);
  CHECK(found.denial_counting->offered_per_s == doctest::Approx(40.0));

  SUBCASE("not when it paused as long as a window") {
    std::erase_if(records, [](const RequestRecord& r) {
      return r.sent_ns >= 1000 * k_ms && r.sent_ns < 2000 * k_ms;
    });
    CHECK_FALSE(find_lockouts(IdentityRecords{records}, sliding(10, 1000), 0, 0).denial_counting);
  }
  SUBCASE("not when a lost reply after it may have been an admission") {
    records[50].outcome = Outcome::error;
    records[50].error = rlcheck::engine::ErrorKind::timeout;
    CHECK_FALSE(find_lockouts(IdentityRecords{records}, sliding(10, 1000), 0, 0).denial_counting);
  }
  SUBCASE("not when the denials stop before the contract surely had room for a while") {
    records.resize(80);  // up to 1.975 s: within the window after the window
    CHECK_FALSE(rlcheck::checks::find_denial_counting(IdentityRecords{records}[0], 0, 1000 * k_ms,
                                                      1000 * k_ms));
  }
}

TEST_CASE("a correct limiter's denials never read as denial counting") {
  // Ten admitted per second: admitted again after each window.
  std::vector<RequestRecord> records;
  for (int64_t t = 0, seq = 0; t < 3000; t += 25, ++seq)
    records.push_back(request(static_cast<uint64_t>(seq), t,
                              (t % 1000) < 250 ? Outcome::allowed : Outcome::denied));
  const LockOuts found = find_lockouts(IdentityRecords{records}, sliding(10, 1000), 0, 0);
  CHECK(found.count == 0);
  CHECK_FALSE(found.denial_counting);
}
