// A token bucket that refills in steps (--refill K/I,steps): K tokens at each tick, none
// between, the ticks' placement unknown. Each audit on fixed records: a fail must hold however
// the ticks fall, and what a smooth bucket of the same rate fails a stepped one may pass.

#include <doctest/doctest.h>

#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/lockout.hpp"
#include "checks/retry_accuracy.hpp"
#include "checks/stepped_bucket.hpp"
#include "command_line_support.hpp"
#include "config/contract_spec.hpp"
#include "config/rate.hpp"
#include "judging/contract_choice.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::find_admission_peak;
using rlcheck::checks::find_lockouts;
using rlcheck::checks::IdentityRecords;
using rlcheck::checks::measure_retry_accuracy;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;

namespace {

constexpr int64_t k_step_ms = 1'000'000;

// Burst 2, 2 tokens at each 1 s tick (a smooth rate of 2 per second), a millisecond clock.
AdmissionRule two_every_second(bool stepped) {
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::bucket;
  rule.burst = 2;
  rule.tokens_per_ns = 2.0 / (1000.0 * k_step_ms);
  rule.clock_ns = k_step_ms;
  if (stepped) {
    rule.step_tokens = 2;
    rule.step_ns = 1000 * k_step_ms;
  }
  return rule;
}

// A request sent at `sent_ms` and answered `latency_ms` later.
RequestRecord stepped_request(uint64_t seq, int64_t sent_ms, Outcome outcome,
                              int64_t latency_ms = 1) {
  RequestRecord r;
  r.seq = seq;
  r.sent_ns = sent_ms * k_step_ms;
  r.replied_ns = r.sent_ns + latency_ms * k_step_ms;
  r.outcome = outcome;
  return r;
}

// `count` admissions sent at each of `sends_ms`, in order.
std::vector<RequestRecord> admitted_at(const std::vector<std::pair<int64_t, int>>& sends_ms) {
  std::vector<RequestRecord> records;
  for (const auto& [sent_ms, count] : sends_ms) {
    for (int k = 0; k < count; ++k)
      records.push_back(stepped_request(records.size(), sent_ms, Outcome::allowed));
  }
  return records;
}

bool over(const std::vector<RequestRecord>& records, bool stepped) {
  return find_admission_peak(records, two_every_second(stepped)).exceeded();
}

int64_t lock_outs(const std::vector<RequestRecord>& records, bool stepped) {
  return find_lockouts(IdentityRecords{records}, two_every_second(stepped), 0, 0).count;
}

// The error of the one judged hint.
int64_t hint_error_ms(const std::vector<RequestRecord>& records, bool stepped) {
  const auto accuracy =
      measure_retry_accuracy(IdentityRecords{records}, two_every_second(stepped), 0, {});
  REQUIRE(accuracy.errors.size() == 1);
  return accuracy.errors.worst()->error_ms;
}

}  // namespace

TEST_CASE("a refill in steps is read from --refill K/I,steps and from a token-bucket spec") {
  const auto rate = rlcheck::config::parse_refill("5/1s,steps");
  REQUIRE(rate.has_value());
  CHECK(rate->tokens == 5);
  CHECK(rate->steps);
  CHECK(rlcheck::config::format_rate(*rate) == "5/s,steps");
  CHECK_FALSE(rlcheck::config::parse_refill("5/s")->steps);
  CHECK_FALSE(rlcheck::config::parse_rate("5/1s,steps").has_value());

  const auto spec = rlcheck::config::parse_contract_spec("token-bucket:20,5/1s,steps");
  REQUIRE(spec.has_value());
  CHECK(*spec->burst == 20);
  CHECK(spec->refill->steps);
  // A GCRA or a queue has no ticks.
  CHECK_FALSE(rlcheck::config::parse_contract_spec("gcra:20,5/1s,steps").has_value());

  const auto parsed = parse_arguments({"http", "http://127.0.0.1:1/", "--contract", "token-bucket",
                                       "--burst", "10", "--refill", "5/1s,steps"});
  const auto choice =
      rlcheck::judging::choose_contract(parsed.config, std::nullopt, parsed.config.checks.limit);
  CHECK(choice.audit.rule.stepped());
  CHECK(choice.audit.rule.step_tokens == 5);
  CHECK(choice.audit.rule.step_ns == 1'000'000'000);
  // An empty bucket frees its next request up to a whole interval on.
  CHECK(choice.audit.max_retry_after_ms >= 1000);
  const auto spec_parsed =
      parse_arguments({"http", "http://127.0.0.1:1/", "--contract", "token-bucket:10,5/1s,steps"});
  CHECK(spec_parsed.config.checks.refill->steps);
}

TEST_CASE("a refill in steps is a token-bucket contract's reading alone") {
  CHECK(mentions(usage_error({"redis", "--strategy", "token-bucket", "--refill", "5/s,steps"}),
                 "--refill 5/s,steps"));
  CHECK(mentions(
      usage_error({"http", "http://127.0.0.1:1/", "--contract", "gcra", "--refill", "5/s,steps"}),
      "--contract token-bucket"));
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--contract",
                              "token-bucket:10,5/1s,steps", "--contract", "sliding:100/1m"}),
                 "one contract alone"));
  CHECK(mentions(
      usage_error({"redis", "--contract", "token-bucket:10,5/1s,steps", "--audit", "stream"}),
      "--refill ...,steps"));
}

TEST_CASE("stepped: a tick's tokens right after the burst are no over-admission") {
  // 2 at 0 ms and 2 more at 10 ms: a tick may have fallen between them.
  const auto records = admitted_at({{0, 2}, {10, 2}});
  CHECK(over(records, false));
  CHECK_FALSE(over(records, true));
}

TEST_CASE("stepped: more than one tick's tokens within an interval fail wherever the ticks fall") {
  // 2 at 0 ms, then 4 at 10 ms: only one tick fits in 11 ms, and it brings 2.
  CHECK(over(admitted_at({{0, 2}, {10, 4}}), true));
  // Over 1.4 s two ticks fit (4 tokens): 6 pass, 7 do not.
  CHECK_FALSE(over(admitted_at({{0, 2}, {500, 2}, {1400, 2}}), true));
  CHECK(over(admitted_at({{0, 2}, {500, 2}, {1400, 3}}), true));
}

TEST_CASE("stepped: a denial between ticks is no lock-out; one after two intervals is") {
  // The burst spent at 0 ms. At 600 ms a smooth bucket has 1.2 tokens back; a stepped one may
  // not have ticked yet (its tick at 999 ms).
  auto records = admitted_at({{0, 2}});
  records.push_back(stepped_request(2, 600, Outcome::denied));
  CHECK(lock_outs(records, false) == 1);
  CHECK(lock_outs(records, true) == 0);
  // At 2100 ms at least two ticks have come, wherever they fall: 4 tokens, capped at 2.
  records.back() = stepped_request(2, 2100, Outcome::denied);
  CHECK(lock_outs(records, true) == 1);
}

TEST_CASE("stepped: a hint to the next tick is right, one past the ticks that surely come late") {
  // The burst spent at 0 ms, denied at 10 ms and told 990 ms: the tick at 1000 ms. A smooth
  // bucket has a token back at 500 ms, so the same hint is late against it.
  auto records = admitted_at({{0, 2}});
  records.push_back(stepped_request(2, 10, Outcome::denied));
  records.back().retry_ms = 990;
  CHECK(hint_error_ms(records, true) == 0);
  CHECK(hint_error_ms(records, false) > 400);
  // Told 0 ms: the tick may have come at once (its phase unknown), so no error either.
  records.back().retry_ms = 0;
  CHECK(hint_error_ms(records, true) == 0);
  // Told 3 s: two ticks (4 tokens) surely came by 2 s, however the bucket stood.
  records.back().retry_ms = 3000;
  CHECK(hint_error_ms(records, true) >= 900);
}

TEST_CASE("the smooth buckets that bracket a stepped one") {
  const AdmissionRule stepped = two_every_second(true);
  CHECK(rlcheck::checks::most_admitting(stepped).burst == 4);
  CHECK(rlcheck::checks::least_holding(stepped).burst == 0);
  CHECK_FALSE(rlcheck::checks::most_admitting(stepped).stepped());
  const AdmissionRule smooth = two_every_second(false);
  CHECK(rlcheck::checks::most_admitting(smooth).burst == 2);
}
