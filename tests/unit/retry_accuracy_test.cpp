#include <doctest/doctest.h>

#include <map>

#include <algorithm>
#include <vector>

#include "checks/retry_accuracy.hpp"

using rlcheck::checks::AccuracyTolerance;
using rlcheck::checks::AdmissionRule;
using rlcheck::checks::hint_tolerance;
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
  return accuracy.errors.worst()->error_ms;
}

}  // namespace

TEST_CASE("a sliding-window hint of the time until the oldest admission leaves has no error") {
  // Window 10 s, 5 admitted at 0-4 ms, denied at 3 s: the slot frees at 10 s.
  CHECK(only_error(full_window_then_denial(5, 3000, 7000), sliding(5, 10'000)) == 0);
}

TEST_CASE("denials a whole number of seconds apart are on a second grid, others are not") {
  // A virtual clock at 1/s: every send a whole second after the first.
  std::vector<RequestRecord> on_grid;
  for (int64_t i = 0; i < 4; ++i)
    on_grid.push_back(request(static_cast<uint64_t>(i), 250 + i * 1000, Outcome::denied, 3000));
  CHECK_FALSE(measure_retry_accuracy(IdentityRecords{on_grid}, sliding(5, 10'000), 0, {})
                  .instants_off_second_grid);
  on_grid.push_back(request(4, 4250 + 1, Outcome::denied, 3000));
  CHECK(measure_retry_accuracy(IdentityRecords{on_grid}, sliding(5, 10'000), 0, {})
            .instants_off_second_grid);
}

TEST_CASE("a hint of the full window is late by the time already waited") {
  const auto records = full_window_then_denial(5, 3000, 10'000);
  const int64_t error = only_error(records, sliding(5, 10'000));
  CHECK(error >= 2990);
  CHECK(error <= 3000);
  const auto accuracy = measure_retry_accuracy(IdentityRecords{records}, sliding(5, 10'000), 0,
                                               AccuracyTolerance{10'000});
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
  CHECK(accuracy.errors.counts() == std::map<int64_t, int64_t>{{0, 3}});
  CHECK(accuracy.unexplained == 0);
}

TEST_CASE("whole-second hints are a minimum: early only by the clocks, late by max(1 s, 10 %)") {
  for (const int64_t window_ms : {1000, 2000, 10'000, 60'000, 3'600'000}) {
    CAPTURE(window_ms);
    const auto seconds = hint_tolerance(1000, window_ms);
    CHECK(seconds.resolution_ms == 1000);
    CHECK(seconds.early_ms == 2 + window_ms / 10'000);
    CHECK(seconds.late_ms == std::max<int64_t>(1000, window_ms / 10));
  }
}

TEST_CASE("millisecond hints are judged within milliseconds, widened only for clock drift") {
  // One step of rounding plus the limiter's second clock read: 2 ms under a 10 s window.
  for (const int64_t window_ms : {100, 1000, 2000, 9999}) {
    CAPTURE(window_ms);
    const auto ms = hint_tolerance(1, window_ms);
    CHECK(ms.resolution_ms == 1);
    CHECK(ms.early_ms == 2);
    CHECK(ms.late_ms == 2);
  }
  // 1 ms per 10 s of window for clock rates (100 ppm): 8 ms at 60 s, still far below a second.
  CHECK(hint_tolerance(1, 60'000).early_ms == 8);
  CHECK(hint_tolerance(1, 60'000).late_ms == 8);
  // Other steps: late by one step plus the same uncertainty, early by the uncertainty alone (a
  // hint is a minimum); a zero or negative resolution is 1 ms.
  CHECK(hint_tolerance(10, 1000).early_ms == 2);
  CHECK(hint_tolerance(10, 1000).late_ms == 11);
  CHECK(hint_tolerance(0, 1000).early_ms == 2);
  CHECK(AccuracyTolerance{2000}.at(1000).late_ms == 1000);
  CHECK(AccuracyTolerance{2000}.at(1).late_ms == 2);
}

// Limit 5 per second: admissions sent at 0-4 ms (each answered in 0.1 ms), one denial sent at
// 100 ms. The slot frees when the first admission leaves: the predicted wait is 899.9 ms to
// 900.1 ms, widened by the limiter's 1 ms clock to 898.9 ... 901.1 ms.
TEST_CASE("a millisecond hint is early or late by more than 2 ms, no longer by a second") {
  const AccuracyTolerance tolerance{1000};
  const auto judge = [&](int64_t hint_ms, int32_t resolution_ms) {
    auto records = full_window_then_denial(5, 100, hint_ms);
    records.back().hint_resolution_ms = resolution_ms;
    return measure_retry_accuracy(IdentityRecords{records}, sliding(5, 1000), 0, tolerance);
  };
  // Half the wait: 450 ms early, at either resolution: a hint is the least time to wait, and
  // whole seconds that floor it are early (a ceiling, 1 s for 0.9 s, is late within tolerance).
  const auto halved = judge(450, 1);
  REQUIRE(halved.errors.size() == 1);
  CHECK(halved.errors.worst()->error_ms <= -448);
  CHECK(halved.errors.worst()->resolution_ms == 1);
  CHECK(halved.early == 1);
  CHECK(halved.resolutions == std::vector<int32_t>{1});
  const auto floored = judge(0, 1000);
  CHECK(floored.early == 1);
  CHECK(floored.errors.worst()->resolution_ms == 1000);
  CHECK(floored.resolutions == std::vector<int32_t>{1000});
  const auto ceiled = judge(1000, 1000);
  CHECK(ceiled.early == 0);
  CHECK(ceiled.late == 0);
  // At the edges of the 2 ms tolerance: 1.9 ms early passes, 3.9 ms early fails; the same late.
  CHECK(judge(897, 1).early == 0);
  CHECK(judge(895, 1).early == 1);
  CHECK(judge(903, 1).late == 0);
  CHECK(judge(905, 1).late == 1);
  CHECK(judge(900, 1).errors.worst()->error_ms == 0);
}

// Replies that queue make the range longer, never the tolerance: a denial sent at 100 ms but
// read at 400 ms may have been decided anywhere in between, so any hint from 600 to 900 ms is
// right; half of it is still hundreds of milliseconds early.
TEST_CASE("a denial that queued long is judged by its wider range, and a halved hint still fails") {
  auto records = full_window_then_denial(5, 100, 650);
  records.back().replied_ns = 400 * k_ms;
  const auto right = measure_retry_accuracy(IdentityRecords{records}, sliding(5, 1000), 0,
                                            AccuracyTolerance{1000});
  REQUIRE(right.errors.size() == 1);
  CHECK(right.errors.worst()->error_ms == 0);
  CHECK(right.early == 0);
  records.back().retry_ms = 325;
  const auto halved = measure_retry_accuracy(IdentityRecords{records}, sliding(5, 1000), 0,
                                             AccuracyTolerance{1000});
  CHECK(halved.errors.worst()->error_ms <= -270);
  CHECK(halved.early == 1);
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
  CHECK(accuracy.errors.worst()->error_ms == 0);
  CHECK(accuracy.late == 0);
}

namespace {

// Limit 5 per 1 s: 5 admitted at 0-4 ms; 5 requests sent at 100-140 ms time out (the server
// runs them after a stall, at 1000 ms), and a denial sent at 1100 ms is told 900 ms: the
// truth, once the timed-out requests filled the window at 1000 ms.
std::vector<RequestRecord> stall_then_denial(rlcheck::engine::ErrorKind kind, int64_t hint_ms) {
  std::vector<RequestRecord> records;
  for (int64_t i = 0; i < 5; ++i)
    records.push_back(request(static_cast<uint64_t>(i), i, Outcome::allowed));
  for (int64_t i = 0; i < 5; ++i) {
    RequestRecord r = request(static_cast<uint64_t>(5 + i), 100 + 10 * i, Outcome::error);
    r.error = kind;
    r.replied_ns = r.sent_ns + 200 * k_ms;
    records.push_back(r);
  }
  records.push_back(request(10, 1100, Outcome::denied, hint_ms));
  return records;
}

}  // namespace

TEST_CASE("a hint that requests possibly admitted unseen explain is not late") {
  const auto records = stall_then_denial(rlcheck::engine::ErrorKind::timeout, 900);
  CHECK(only_error(records, sliding(5, 1000)) == 0);
  // A hint longer than any reading allows (the window) is still late.
  const auto too_long = stall_then_denial(rlcheck::engine::ErrorKind::timeout, 3000);
  CHECK(only_error(too_long, sliding(5, 1000)) > 1000);
  // Requests that never left explain nothing: the slot freed at 1000 ms, so 900 ms is late.
  const auto never_sent = stall_then_denial(rlcheck::engine::ErrorKind::not_sent, 900);
  CHECK(only_error(never_sent, sliding(5, 1000)) > 800);
}

TEST_CASE("unknown requests may have taken a token bucket's tokens just before a denial") {
  AdmissionRule bucket;
  bucket.kind = AdmissionRule::Kind::bucket;
  bucket.burst = 5;
  bucket.tokens_per_ns = 5.0 / 1e9;  // one token every 200 ms
  bucket.window_ns = 1000 * k_ms;
  bucket.clock_ns = k_ms;
  // By 1100 ms the bucket is full again unless the 5 unknown requests took its tokens: a hint
  // of 200 ms (a token's refill) is right under that reading.
  const auto records = stall_then_denial(rlcheck::engine::ErrorKind::timeout, 200);
  CHECK(only_error(records, bucket) == 0);
  const auto accuracy = measure_retry_accuracy(
      IdentityRecords{stall_then_denial(rlcheck::engine::ErrorKind::not_sent, 200)}, bucket, 0, {});
  CHECK(accuracy.errors.empty());
  CHECK(accuracy.unexplained == 1);
}

TEST_CASE("a hint read against Date may be a second later: the tolerance says so") {
  const auto read = hint_tolerance(1000, 2000, true);
  CHECK(read.early_ms == 1002);
  CHECK(read.late_ms == 2000);
  CHECK(hint_tolerance(1000, 60'000, true).late_ms == 7000);
  CHECK(AccuracyTolerance{2000}.at(1000, true).late_ms == 2000);

  // Predicted 900 ms (limit 5 per second, denied at 100 ms); told 2400 ms: 1.5 s late.
  const auto judge = [](bool from_date) {
    auto records = full_window_then_denial(5, 100, 2400);
    records.back().hint_resolution_ms = 1000;
    records.back().retry_from_date = from_date;
    return measure_retry_accuracy(IdentityRecords{records}, sliding(5, 1000), 0,
                                  AccuracyTolerance{1000});
  };
  CHECK(judge(false).late == 1);  // a delay-seconds Retry-After knows its second
  CHECK(judge(true).late == 0);   // an HTTP-date read against a truncated Date does not
  // 2.5 s late is beyond either.
  auto records = full_window_then_denial(5, 100, 3500);
  records.back().hint_resolution_ms = 1000;
  records.back().retry_from_date = true;
  CHECK(
      measure_retry_accuracy(IdentityRecords{records}, sliding(5, 1000), 0, AccuracyTolerance{1000})
          .late == 1);

  // Which of the two a hint is: Retry-After's, else the reset's.
  RequestRecord record;
  record.retry_ms = 1000;
  record.reset_from_date = true;
  CHECK_FALSE(rlcheck::checks::usable_hint_from_date(record));
  record.retry_ms.reset();
  record.advertised_reset_s = 1;
  CHECK(rlcheck::checks::usable_hint_from_date(record));
}

TEST_CASE("millisecond hints that are all whole seconds can be judged again as whole seconds") {
  const AccuracyTolerance tolerance{1000};
  // Predicted 900 ms; a script that rounds up says 1000 ms: 100 ms late to the millisecond.
  auto ceiled = measure_retry_accuracy(IdentityRecords{full_window_then_denial(5, 100, 1000)},
                                       sliding(5, 1000), 0, tolerance);
  CHECK(ceiled.finer_hints_whole_seconds);
  CHECK(ceiled.late == 1);
  CHECK(ceiled.resolutions == std::vector<int32_t>{1});
  rlcheck::checks::judge_as_whole_seconds(ceiled, tolerance);
  CHECK(ceiled.late == 0);
  CHECK(ceiled.early == 0);
  CHECK(ceiled.judged_as_whole_seconds);
  CHECK(ceiled.resolutions == std::vector<int32_t>{1000});

  // A millisecond hint is not a whole second.
  const auto exact = measure_retry_accuracy(IdentityRecords{full_window_then_denial(5, 100, 900)},
                                            sliding(5, 1000), 0, tolerance);
  CHECK_FALSE(exact.finer_hints_whole_seconds);

  // Judged as whole seconds, a hint two seconds late still fails.
  auto late = measure_retry_accuracy(IdentityRecords{full_window_then_denial(5, 100, 3000)},
                                     sliding(5, 1000), 0, tolerance);
  rlcheck::checks::judge_as_whole_seconds(late, tolerance);
  CHECK(late.late == 1);

  // Hints already in whole seconds (HTTP, --reply cell) are left as they were judged.
  auto records = full_window_then_denial(5, 100, 450);
  records.back().hint_resolution_ms = 1000;
  auto seconds = measure_retry_accuracy(IdentityRecords{records}, sliding(5, 1000), 0, tolerance);
  CHECK(seconds.finer_hints_whole_seconds);
  rlcheck::checks::judge_as_whole_seconds(seconds, tolerance);
  CHECK_FALSE(seconds.judged_as_whole_seconds);
}
