#include <doctest/doctest.h>

#include <vector>

#include "checks/contract_audit.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::assign_wall_windows;
using rlcheck::checks::audit_contract;
using rlcheck::checks::measure_utilisation;
using rlcheck::checks::split_by_identity;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord request(uint64_t seq, int64_t sent_ns, Outcome outcome, uint32_t identity = 0) {
  RequestRecord r;
  r.seq = seq;
  r.identity = identity;
  r.sent_ns = sent_ns;
  r.replied_ns = sent_ns + k_ms / 10;
  r.outcome = outcome;
  return r;
}

AdmissionRule rule_of(AdmissionRule::Kind kind, int64_t limit, int64_t window_ms) {
  AdmissionRule rule;
  rule.kind = kind;
  rule.limit = limit;
  rule.window_ns = window_ms * k_ms;
  rule.burst = limit;
  rule.tokens_per_ns = static_cast<double>(limit) / static_cast<double>(rule.window_ns);
  return rule;
}

// `count` requests 25 ms apart (40/s), the first `admitted` allowed, the rest denied.
std::vector<RequestRecord> steady(int count, int admitted) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < count; ++i) {
    records.push_back(request(static_cast<uint64_t>(i), i * 25 * k_ms,
                              i < admitted ? Outcome::allowed : Outcome::denied));
  }
  return records;
}

}  // namespace

TEST_CASE("records split by identity keep their order, and each identity is audited alone") {
  std::vector<RequestRecord> records;
  // Two identities interleaved, each admitted 10 times within 100 ms: 20 together.
  for (uint64_t seq = 0; seq < 20; ++seq) {
    records.push_back(request(seq, static_cast<int64_t>(seq) * 5 * k_ms, Outcome::allowed,
                              static_cast<uint32_t>(seq % 2)));
  }
  auto grouped = records;
  const auto split = split_by_identity(grouped, 2);
  REQUIRE(split.size() == 2);
  CHECK(split[0].size() == 10);
  CHECK(split[0][1].seq == 2);  // each identity's records stay in seq order
  CHECK(split[1].front().seq == 1);
  const AdmissionRule sliding = rule_of(AdmissionRule::Kind::sliding, 10, 1000);
  CHECK_FALSE(audit_contract(split, sliding).worst.exceeded());
  // As one identity the same admissions break the promise.
  const auto merged = audit_contract(split_by_identity(records, 1), sliding);
  CHECK(merged.worst.exceeded());
  CHECK(merged.worst.count == 20);
}

TEST_CASE("the worst identity is the one that exceeded most") {
  std::vector<RequestRecord> records;
  for (uint64_t seq = 0; seq < 12; ++seq)
    records.push_back(request(seq, static_cast<int64_t>(seq) * k_ms, Outcome::allowed, 1));
  records.push_back(request(12, 0, Outcome::allowed, 0));
  const auto audit = audit_contract(split_by_identity(records, 2),
                                    rule_of(AdmissionRule::Kind::sliding, 10, 1000));
  CHECK(audit.worst_identity == 1);
  CHECK(audit.worst.count == 12);
}

TEST_CASE("fixed windows without an index are placed on the wall clock; a straddler stands alone") {
  AdmissionRule fixed = rule_of(AdmissionRule::Kind::fixed, 2, 1000);
  fixed.clock_ns = k_ms;
  const int64_t start_wall = 10'000 * k_ms - 500 * k_ms;  // 500 ms before a boundary
  std::vector<RequestRecord> records = {
      request(0, 100 * k_ms, Outcome::allowed),  // window 9
      request(1, 200 * k_ms, Outcome::allowed),  // window 9
      request(2, 500 * k_ms, Outcome::allowed),  // sent 0 ms from the boundary: alone
      request(3, 600 * k_ms, Outcome::allowed),  // window 10
      request(4, 700 * k_ms, Outcome::allowed),  // window 10
      request(5, 300 * k_ms, Outcome::denied)};  // denials keep no window
  assign_wall_windows(records, start_wall, fixed);
  CHECK(records[0].bucket == 9);
  CHECK(records[1].bucket == 9);
  CHECK(records[2].bucket < 0);
  CHECK(records[3].bucket == 10);
  CHECK(records[5].bucket == 0);
  auto split = split_by_identity(records, 1);
  const auto audit = audit_contract(split, fixed);
  CHECK_FALSE(audit.worst.exceeded());
  // The boundary burst: five admissions within 600 ms, told as information.
  CHECK(audit.boundary_burst.count == 5);
}

TEST_CASE("utilisation compares admissions with what the contract allows for the same requests") {
  const AdmissionRule sliding = rule_of(AdmissionRule::Kind::sliding, 10, 1000);
  // 120 requests at 40/s over 3 s: a sliding window of 10 per 1 s admits 30 of them.
  const auto honest = steady(120, 0);
  auto correct = honest;
  int admitted = 0;
  for (auto& record : correct) {
    const int64_t second = record.sent_ns / (1000 * k_ms);
    const int64_t within = (record.sent_ns % (1000 * k_ms)) / (25 * k_ms);
    (void)second;
    if (within < 10) {
      record.outcome = Outcome::allowed;
      ++admitted;
    }
  }
  const auto full = measure_utilisation(split_by_identity(correct, 1), sliding, 0);
  CHECK(full.allowed == 30);
  CHECK(full.admitted == admitted);
  CHECK(full.ratio() == doctest::Approx(1.0));

  // A limiter that counts denials too admits the first 10 and locks the client out.
  auto first_ten = steady(120, 10);
  const auto locked = measure_utilisation(split_by_identity(first_ten, 1), sliding, 0);
  CHECK(locked.admitted == 10);
  CHECK(locked.allowed == 30);
  CHECK(locked.ratio() < 0.9);
}

TEST_CASE("utilisation of a token bucket replays the bucket over the requests sent") {
  // Burst 10, refill 10 per second; 120 requests at 40/s over 3 s: 10 + ~30 tokens.
  const AdmissionRule bucket = rule_of(AdmissionRule::Kind::bucket, 10, 1000);
  auto none = steady(120, 0);
  const auto share = measure_utilisation(split_by_identity(none, 1), bucket, 0);
  CHECK(share.allowed >= 38);
  CHECK(share.allowed <= 40);
  CHECK(share.admitted == 0);
  CHECK(share.ratio() == doctest::Approx(0.0));
}

TEST_CASE("errored requests are neither offered nor admitted") {
  std::vector<RequestRecord> records = steady(5, 5);
  records.push_back(request(5, 200 * k_ms, Outcome::error));
  const auto share = measure_utilisation(split_by_identity(records, 1),
                                         rule_of(AdmissionRule::Kind::sliding, 10, 1000), 0);
  CHECK(share.allowed == 5);
  CHECK(share.admitted == 5);
}

TEST_CASE("requests that errored after sending are read as unsent or as admitted") {
  std::vector<RequestRecord> records = steady(5, 5);
  RequestRecord lost = request(5, 200 * k_ms, Outcome::error);
  lost.error = rlcheck::engine::ErrorKind::timeout;
  records.push_back(lost);
  RequestRecord refused = request(6, 210 * k_ms, Outcome::error);
  refused.error = rlcheck::engine::ErrorKind::refused;
  records.push_back(refused);
  const auto share = measure_utilisation(split_by_identity(records, 1),
                                         rule_of(AdmissionRule::Kind::sliding, 10, 1000), 0);
  // Read as never sent (5 of 5) or as admitted (6 of 6): a full share either way, and a tie
  // keeps the reading without it.
  CHECK(share.ratio() == doctest::Approx(1.0));
  CHECK(share.admitted == 5);
  CHECK(share.unknown == 0);
}

TEST_CASE("unknown requests never make a share worse than leaving them out") {
  // 10 admitted in the first 250 ms of 2 s at 40/s, then denied: a lock-out whose share is
  // 10 of 20. Timed-out requests in the second window, read as admitted, lift it.
  std::vector<RequestRecord> records = steady(80, 10);
  const auto rule = rule_of(AdmissionRule::Kind::sliding, 10, 1000);
  const auto before = measure_utilisation(split_by_identity(records, 1), rule, 0);
  for (size_t i = 45; i < 55; ++i) {
    records[i].outcome = Outcome::error;
    records[i].error = rlcheck::engine::ErrorKind::timeout;
  }
  const auto after = measure_utilisation(split_by_identity(records, 1), rule, 0);
  CHECK(after.ratio() > before.ratio());
  CHECK(after.unknown == 10);
}
