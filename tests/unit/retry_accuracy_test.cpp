#include <doctest/doctest.h>

#include <vector>

#include "checks/retry_accuracy.hpp"

using rlcheck::checks::AccuracyTolerance;
using rlcheck::checks::AdmissionRule;
using rlcheck::checks::IdentityRecords;
using rlcheck::checks::measure_retry_accuracy;
using rlcheck::checks::usable_hint_ms;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord request(uint64_t seq, int64_t sent_ms, Outcome outcome,
                      std::optional<int64_t> retry_ms = std::nullopt) {
  RequestRecord r;
  r.seq = seq;
  r.sent_ns = sent_ms * k_ms;
  r.replied_ns = r.sent_ns + k_ms / 10;
  r.outcome = outcome;
  r.retry_ms = retry_ms;
  return r;
}

AdmissionRule sliding(int64_t limit, int64_t window_ms) {
  AdmissionRule rule;
  rule.limit = limit;
  rule.window_ns = window_ms * k_ms;
  rule.clock_ns = k_ms;
  return rule;
}

// `limit` admissions at 0, 1, 2... ms, then one denial at `denied_ms` told `hint_ms`.
std::vector<RequestRecord> full_window_then_denial(int64_t limit, int64_t denied_ms,
                                                   int64_t hint_ms) {
  std::vector<RequestRecord> records;
  for (int64_t i = 0; i < limit; ++i)
    records.push_back(request(static_cast<uint64_t>(i), i, Outcome::allowed));
  records.push_back(request(static_cast<uint64_t>(limit), denied_ms, Outcome::denied, hint_ms));
  return records;
}

int64_t only_error(const std::vector<RequestRecord>& records, const AdmissionRule& rule,
                   int64_t start_wall_ns = 0) {
  const auto accuracy = measure_retry_accuracy(IdentityRecords{records}, rule, start_wall_ns, {});
  REQUIRE(accuracy.errors.size() == 1);
  return accuracy.errors.front().error_ms;
}

}  // namespace

TEST_CASE("a sliding-window hint of the time until the oldest admission leaves has no error") {
  // Window 10 s, 5 admitted at 0-4 ms, denied at 3 s: the slot frees at 10 s.
  CHECK(only_error(full_window_then_denial(5, 3000, 7000), sliding(5, 10'000)) == 0);
}

TEST_CASE("a hint of the full window is late by the time already waited") {
  const auto records = full_window_then_denial(5, 3000, 10'000);
  const int64_t error = only_error(records, sliding(5, 10'000));
  CHECK(error >= 2990);
  CHECK(error <= 3000);
  const auto accuracy = measure_retry_accuracy(IdentityRecords{records}, sliding(5, 10'000), 0,
                                               AccuracyTolerance{1000, 1000});
  CHECK(accuracy.late == 1);
  CHECK(accuracy.early == 0);
}

TEST_CASE("a hint of 1 s when the slot frees in 7 s is early") {
  const auto records = full_window_then_denial(5, 3000, 1000);
  CHECK(only_error(records, sliding(5, 10'000)) <= -5990);
  const auto accuracy = measure_retry_accuracy(IdentityRecords{records}, sliding(5, 10'000), 0, {});
  CHECK(accuracy.early == 1);
}

TEST_CASE("a denial the admissions seen cannot explain is not judged") {
  // Only 3 of 5 admitted, yet denied: the limiter counted something rlcheck did not see.
  const auto records = full_window_then_denial(3, 3000, 60'000);
  const auto accuracy = measure_retry_accuracy(IdentityRecords{records}, sliding(5, 10'000), 0, {});
  CHECK(accuracy.errors.empty());
  CHECK(accuracy.unexplained == 1);
}

TEST_CASE("an admission in flight with the denial widens the prediction, never narrows it") {
  // Limit 1. The admission sent at 0 ms replies late (at 50 ms); the denial is sent at 10 ms.
  // Whether the admission came first is unsure, so any hint up to 50 + 1000 - 10 ms is right.
  std::vector<RequestRecord> records = {request(0, 0, Outcome::allowed),
                                        request(1, 10, Outcome::denied, 1030)};
  records[0].replied_ns = 50 * k_ms;
  CHECK(only_error(records, sliding(1, 1000)) == 0);
  records[1].retry_ms = 1100;
  CHECK(only_error(records, sliding(1, 1000)) > 0);
}

TEST_CASE("a fixed-window hint is the time to the end of the window the denial fell in") {
  AdmissionRule fixed = sliding(1, 1000);
  fixed.kind = AdmissionRule::Kind::fixed;
  std::vector<RequestRecord> records = {request(0, 0, Outcome::allowed),
                                        request(1, 300, Outcome::denied, 700)};
  records[0].bucket = 5;  // the limiter names its windows: window 5 ends at 6 s on the wall
  records[1].bucket = 5;
  const int64_t start_wall = 5000 * k_ms;
  CHECK(only_error(records, fixed, start_wall) == 0);
  records[1].retry_ms = 2700;
  CHECK(only_error(records, fixed, start_wall) >= 1990);
}

TEST_CASE("a token-bucket hint is the time until one token is back") {
  AdmissionRule bucket;
  bucket.kind = AdmissionRule::Kind::bucket;
  bucket.burst = 5;
  bucket.tokens_per_ns = 5.0 / 1e9;  // 5 per second: one token every 200 ms
  bucket.window_ns = 1000 * k_ms;
  bucket.clock_ns = k_ms;
  // 5 admitted at 0-4 ms, denied at 10 ms: a token is back about 190 ms later.
  auto records = full_window_then_denial(5, 10, 190);
  CHECK(only_error(records, bucket) == 0);
  records.back().retry_ms = 2000;
  CHECK(only_error(records, bucket) > 1700);
}

TEST_CASE("the hint is retry_ms, else the advertised reset; malformed hints are not usable") {
  RequestRecord record = request(0, 0, Outcome::denied, 1500);
  CHECK(usable_hint_ms(record) == 1500);
  record.retry_ms.reset();
  record.advertised_reset_s = 3;
  CHECK(usable_hint_ms(record) == 3000);
  record.hint_invalid = true;
  CHECK_FALSE(usable_hint_ms(record).has_value());
}

// Token bucket of 10 refilled 10 per 600 ms (one token every 60 ms). Redis runs the 10
// admissions at 0.1 ... 1.0 ms (all sent at 0), but the client reads their replies 20 ms late.
// Three denials are all decided at 50 ms, when 0.015 + 49/60 tokens are back, so the limiter
// tells each of them ceil(60 x (1 - 0.8317)) = 11 ms: one sent at 49 ms and answered at once,
// one queued from 30 ms, one sent at 49.5 ms and read 20 ms late. The same truth, the same hint:
// each must have no error. (Replaying the admissions at their sends against the denial's send,
// and at their replies against its reply, pairs early with early and late with late and judged
// the queued one 17 ms early.)
TEST_CASE("identical token-bucket hints get the same judgement, however the requests queued") {
  AdmissionRule bucket;
  bucket.kind = AdmissionRule::Kind::bucket;
  bucket.burst = 10;
  bucket.tokens_per_ns = 10.0 / (600.0 * k_ms);
  bucket.window_ns = 600 * k_ms;
  bucket.clock_ns = k_ms;
  std::vector<RequestRecord> records;
  for (uint64_t k = 0; k < 10; ++k) {
    RequestRecord admission = request(k, 0, Outcome::allowed);
    admission.replied_ns = static_cast<int64_t>(k + 1) * k_ms / 10 + 20 * k_ms;
    records.push_back(admission);
  }
  const auto denial = [](uint64_t seq, double sent_ms, double replied_ms) {
    RequestRecord r = request(seq, 0, Outcome::denied, 11);
    r.sent_ns = static_cast<int64_t>(sent_ms * k_ms);
    r.replied_ns = static_cast<int64_t>(replied_ms * k_ms);
    return r;
  };
  records.push_back(denial(10, 49, 50.5));
  records.push_back(denial(11, 30, 50.5));
  records.push_back(denial(12, 49.5, 70));
  const auto accuracy = measure_retry_accuracy(IdentityRecords{records}, bucket, 0, {});
  REQUIRE(accuracy.errors.size() == 3);
  for (const auto& error : accuracy.errors) {
    CAPTURE(error.seq);
    CHECK(error.error_ms == 0);
  }
  CHECK(accuracy.unexplained == 0);
}

// A bucket of 2 refilled every 20 ms. Redis runs the two admissions at ~0.2 and ~0.5 ms (the
// second one's reply is read at 6 ms), then at ~20.2 ms a third one that a token just came
// back for, then a denial sent earlier (19.4 ms) but queued behind it: it waits for the next
// token, ~19.9 ms, and is told 20 ms. The longest prediction replays the admissions at their
// replies, so the third lands at 25.5 ms, after the denial's send: the wait from the send must
// include the refill between the two, else the true hint is judged ~4 ms late.
TEST_CASE("a token-bucket denial queued behind an admission replayed after its send is not late") {
  AdmissionRule bucket;
  bucket.kind = AdmissionRule::Kind::bucket;
  bucket.burst = 2;
  bucket.tokens_per_ns = 1.0 / (20.0 * k_ms);
  bucket.window_ns = 40 * k_ms;
  bucket.clock_ns = k_ms;
  const auto at = [](uint64_t seq, double sent_ms, double replied_ms, Outcome outcome) {
    RequestRecord r = request(seq, 0, outcome);
    r.sent_ns = static_cast<int64_t>(sent_ms * k_ms);
    r.replied_ns = static_cast<int64_t>(replied_ms * k_ms);
    return r;
  };
  std::vector<RequestRecord> records{
      at(0, 0, 0.4, Outcome::allowed), at(1, 0.4, 6, Outcome::allowed),
      at(3, 19.9, 25.5, Outcome::allowed), at(2, 19.4, 25.4, Outcome::denied)};
  records.back().retry_ms = 20;
  const auto accuracy =
      measure_retry_accuracy(IdentityRecords{records}, bucket, 0, AccuracyTolerance{1000});
  REQUIRE(accuracy.errors.size() == 1);
  CHECK(accuracy.errors.front().error_ms == 0);
  CHECK(accuracy.late == 0);
}
