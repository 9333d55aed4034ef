#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "checks/contract_inference.hpp"
#include "checks/second_limit.hpp"
#include "config/contract_spec.hpp"

using namespace rlcheck::checks;
using rlcheck::engine::Outcome;

namespace {

constexpr int64_t k_ms = 1'000'000;

ProbeRequest admitted_at(int64_t at_ms, int64_t latency_ms = 0) {
  return {at_ms * k_ms, Outcome::allowed, std::nullopt, latency_ms * k_ms};
}
ProbeRequest denied_at(int64_t at_ms, std::optional<int64_t> hint_ms = std::nullopt) {
  return {at_ms * k_ms, Outcome::denied, hint_ms};
}

// 5 per second, as probed.
FirstLimit five_per_second() {
  InferredContract inferred;
  inferred.algorithm = "sliding";
  inferred.limit = 5;
  inferred.window_ms = 1000;
  inferred.window_tolerance_ms = 30;
  return *first_limit_of(inferred, 2 * k_ms);
}

// A phase paced every 222 ms (4.5/s) on a limiter of 5/1s and 15/5s: 15 admitted, then denied
// until the phase's first admission is 5 s old.
std::vector<ProbeRequest> phase_against_fifteen_per_five_seconds() {
  std::vector<ProbeRequest> phase;
  for (int64_t at = 0;; at += 222) {
    if (phase.size() < 15) {
      phase.push_back(admitted_at(at));
    } else if (at < 5000) {
      phase.push_back(denied_at(at, (5000 - at + 999) / 1000 * 1000));
    } else {
      phase.push_back(admitted_at(at));
      return phase;
    }
  }
}

}  // namespace

TEST_CASE("first_limit_of: windows and buckets are paced against, other contracts are not") {
  const FirstLimit window = five_per_second();
  CHECK_FALSE(window.bucket);
  CHECK(window.limit == 5);
  CHECK(window.window_ns == 1000 * k_ms);
  CHECK(window.slack_ns == 32 * k_ms);
  CHECK(first_rate_per_s(window) == doctest::Approx(5.0));
  CHECK(first_span_ns(window) == 1000 * k_ms);

  InferredContract bucket;
  bucket.algorithm = "token-bucket";
  bucket.burst = 10;
  bucket.refill_per_s = 5;
  bucket.refill_interval = RateInterval{4.5, 5.5};
  const FirstLimit tokens = *first_limit_of(bucket, 0);
  CHECK(tokens.bucket);
  CHECK(tokens.refill_per_s == doctest::Approx(4.5));  // the slowest the brackets allow
  CHECK(first_span_ns(tokens) == doctest::Approx(10 / 4.5 * 1e9).epsilon(1e-6));

  for (const char* algorithm : {"sliding-counter", "queue", "denial-counting", "none"}) {
    InferredContract other;
    other.algorithm = algorithm;
    other.limit = 5;
    other.window_ms = 1000;
    other.refill_per_s = 5;
    CHECK_FALSE(first_limit_of(other, 0));
  }
}

TEST_CASE("first_limit_had_room: a window counts its admissions over its window and slack") {
  const FirstLimit first = five_per_second();
  // Paced every 222 ms: at most 4 admissions in any 1032 ms before the next request.
  std::vector<ProbeRequest> paced;
  for (int64_t at = 0; at < 2000; at += 222)
    paced.push_back(admitted_at(at));
  CHECK(first_limit_had_room(first, paced, denied_at(2220)));
  // Five within the last second: the first limit explains a denial.
  const std::vector<ProbeRequest> bunched{admitted_at(100), admitted_at(200), admitted_at(300),
                                          admitted_at(400), admitted_at(500)};
  CHECK_FALSE(first_limit_had_room(first, bunched, denied_at(1000)));
  // The oldest left the window (and its slack) by 1133 ms.
  CHECK(first_limit_had_room(first, bunched, denied_at(1133)));
  // Slow replies widen it: admitted 80 ms either side of 100 and a denial 80 ms either side of
  // 1133 may have been 1 s apart.
  std::vector<ProbeRequest> slow = bunched;
  slow.front().latency_ns = 160 * k_ms;
  ProbeRequest slow_denial = denied_at(1133);
  slow_denial.latency_ns = 160 * k_ms;
  CHECK_FALSE(first_limit_had_room(first, slow, slow_denial));
  // Denials take no slot.
  const std::vector<ProbeRequest> denials{denied_at(100), denied_at(200), denied_at(300),
                                          denied_at(400), denied_at(500)};
  CHECK(first_limit_had_room(first, denials, denied_at(600)));
}

TEST_CASE("first_limit_had_room: a bucket full at the start, refilled at its slowest rate") {
  FirstLimit first;
  first.bucket = true;
  first.burst = 2;
  first.refill_per_s = 1;
  const std::vector<ProbeRequest> two{admitted_at(0), admitted_at(10)};
  CHECK_FALSE(first_limit_had_room(first, two, denied_at(500)));  // 0.5 token back
  CHECK(first_limit_had_room(first, two, denied_at(1100)));       // one token back
  const std::vector<ProbeRequest> one{admitted_at(0)};
  CHECK(first_limit_had_room(first, one, denied_at(5)));
}

TEST_CASE("read_sustained: the second limit's count, denial and readmission") {
  const std::vector<ProbeRequest> phase = phase_against_fifteen_per_five_seconds();
  const SustainedReading reading = read_sustained(five_per_second(), phase);
  CHECK(reading.requests == static_cast<int64_t>(phase.size()));
  CHECK(reading.admitted_before_second == 15);
  CHECK(reading.explained_denials == 0);
  REQUIRE(reading.second_denial_ns);
  CHECK(*reading.second_denial_ns == 15 * 222 * k_ms);
  CHECK(reading.second_hint_ms == 2000);
  REQUIRE(reading.readmission);
  CHECK(reading.readmission->admitted_ns == phase.back().at_ns);
  CHECK(reading.readmission->last_denied_ns == phase[phase.size() - 2].at_ns);

  const std::optional<SecondWindow> window = second_window(reading);
  REQUIRE(window);
  CHECK_FALSE(window->from_hint);
  // Within the paced step of 5 s: 4884 and 5106 bracket it.
  CHECK(window->window_ns >= 4884 * k_ms);
  CHECK(window->window_ns <= 5106 * k_ms);
  CHECK(window->tolerance_ns == 111 * k_ms);
}

TEST_CASE("read_sustained: without a readmission the window is read off the denial's hint") {
  std::vector<ProbeRequest> phase = phase_against_fifteen_per_five_seconds();
  phase.resize(16);  // the budget ended at the denial
  const SustainedReading reading = read_sustained(five_per_second(), phase);
  CHECK_FALSE(reading.readmission);
  const std::optional<SecondWindow> window = second_window(reading);
  REQUIRE(window);
  CHECK(window->from_hint);
  CHECK(window->window_ns == (15 * 222 + 2000) * k_ms);

  phase.back().retry_ms.reset();
  CHECK_FALSE(second_window(read_sustained(five_per_second(), phase)));
}

TEST_CASE("read_sustained: a denial the first limit explains is not a second limit's") {
  // Six sent 100 ms apart: the sixth meets the first limit, not a second one.
  std::vector<ProbeRequest> phase;
  for (int64_t at = 0; at < 500; at += 100)
    phase.push_back(admitted_at(at));
  phase.push_back(denied_at(500));
  for (int64_t at = 1300; at < 4000; at += 250)
    phase.push_back(admitted_at(at));
  const SustainedReading reading = read_sustained(five_per_second(), phase);
  CHECK(reading.explained_denials == 1);
  CHECK_FALSE(reading.second_denial_ns);
  CHECK_FALSE(second_window(reading));
  CHECK(reading.admitted == static_cast<int64_t>(phase.size()) - 1);
}

TEST_CASE("second_limit_spec: a sliding part, its window snapped; nothing unless found") {
  SecondLimitSearch second;
  second.outcome = "found";
  second.limit = 15;
  second.window_ms = 4976;
  second.window_tolerance_ms = 113;
  CHECK(second_limit_spec(second) == "sliding:15/5s");
  const auto parsed = rlcheck::config::parse_contract_spec(second_limit_spec(second));
  REQUIRE(parsed.has_value());
  CHECK(parsed->limit == 15);
  CHECK(parsed->window == std::chrono::seconds(5));
  second.window_ms.reset();
  CHECK(second_limit_spec(second).empty());
  second.outcome = "none-seen";
  CHECK(second_limit_spec(second).empty());
}

TEST_CASE("contract_spec: the first contract as a --contract part") {
  InferredContract sliding;
  sliding.algorithm = "sliding";
  sliding.limit = 5;
  sliding.window_ms = 991;
  sliding.window_tolerance_ms = 30;
  CHECK(contract_spec(sliding) == "sliding:5/1s");
  sliding.algorithm = "fixed";
  sliding.anchor = "first-hit";
  CHECK(contract_spec(sliding) == "fixed:5/1s@first-hit");

  InferredContract bucket;
  bucket.algorithm = "token-bucket";
  bucket.burst = 5;
  bucket.refill_per_s = 10;
  bucket.refill_interval = RateInterval{9.6, 10.4};
  CHECK(contract_spec(bucket) == "token-bucket:5,10/s");
  // Each as --contract reads it.
  for (const std::string& spec :
       {contract_spec(sliding), contract_spec(bucket), std::string("sliding:5/1s")}) {
    CAPTURE(spec);
    CHECK(rlcheck::config::parse_contract_spec(spec).has_value());
  }
}
