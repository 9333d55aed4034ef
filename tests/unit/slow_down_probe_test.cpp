#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "checks/contract_inference.hpp"
#include "checks/slow_down_probe.hpp"

using namespace rlcheck::checks;

namespace {

constexpr int64_t k_slow_ms = 1'000'000;

std::vector<int64_t> in_ms(const std::vector<double>& latencies_ms) {
  std::vector<int64_t> latencies;
  for (const double ms : latencies_ms)
    latencies.push_back(static_cast<int64_t>(ms * 1e6));
  return latencies;
}

}  // namespace

TEST_CASE("slow-down probe: 3 at full speed, then 100 ms more each, read as N 3 and D 100 ms") {
  const auto steps = read_slow_down(in_ms({2.1, 1.8, 2.0, 102.3, 201.7, 302.5, 401.9, 502.2}));
  REQUIRE(steps);
  CHECK(steps->after == 3);
  CHECK(steps->growing == 5);
  CHECK(steps->step_ns == doctest::Approx(100 * k_slow_ms).epsilon(0.01));
  CHECK(!steps->cap_ns);
  // Snapped within its tolerance: 100 ms.
  const SnappedDuration step =
      snap_duration_ms(steps->step_ns / 1e6, steps->step_tolerance_ns / 1e6, std::nullopt);
  CHECK(step.ms == 100);
  CHECK(step.basis == "round");
}

TEST_CASE("slow-down probe: a first reply slowed by its connection is still at full speed") {
  const auto steps = read_slow_down(in_ms({18, 1.2, 1.1, 101.5, 201.2, 301.4, 401.3, 501.6}));
  REQUIRE(steps);
  CHECK(steps->after == 3);
  CHECK(steps->step_ns == doctest::Approx(100 * k_slow_ms).epsilon(0.02));
}

TEST_CASE("slow-down probe: a batch by rank that reaches its cap reads the cap") {
  // Past 3, 100 ms each up to 1 s: ranks 4 to 13 grow, 14 to 16 stay at 1 s.
  std::vector<double> ms{3, 3.5, 4};
  for (int k = 1; k <= 13; ++k)
    ms.push_back(3 + 100.0 * std::min(k, 10) + (k % 3));
  const auto steps = read_slow_down(in_ms(ms));
  REQUIRE(steps);
  CHECK(steps->after == 3);
  CHECK(steps->growing == 10);
  REQUIRE(steps->cap_ns);
  CHECK(*steps->cap_ns == doctest::Approx(1000 * k_slow_ms).epsilon(0.01));
  const SnappedDuration cap =
      snap_duration_ms(*steps->cap_ns / 1e6, steps->cap_tolerance_ns / 1e6, std::nullopt);
  CHECK(cap.ms == 1000);
}

TEST_CASE("slow-down probe: a cap between two steps is a level, not a step") {
  // 50 ms each, capped at 130 ms: 50, 100, then 130 and 130.
  const auto steps = read_slow_down(in_ms({1, 1, 51, 101, 131, 131, 131}));
  REQUIRE(steps);
  CHECK(steps->after == 2);
  CHECK(steps->growing == 2);
  CHECK(steps->step_ns == doctest::Approx(50 * k_slow_ms).epsilon(0.01));
  REQUIRE(steps->cap_ns);
  CHECK(*steps->cap_ns == doctest::Approx(130 * k_slow_ms).epsilon(0.01));
}

TEST_CASE("slow-down probe: one reply read late does not tilt the step") {
  const auto steps = read_slow_down(in_ms({2, 2, 2, 102, 202, 330, 402, 502}));
  REQUIRE(steps);
  CHECK(steps->step_ns == doctest::Approx(100 * k_slow_ms).epsilon(0.02));
  // The late reply widens the tolerance: 30 ms off the line over 5 steps.
  CHECK(steps->step_tolerance_ns >= 6 * k_slow_ms);
}

TEST_CASE("slow-down probe: a queue's regular waits, or nothing delayed, are no slow-down") {
  // One by one through a queue: the first at once, every other one interval late.
  CHECK(!read_slow_down(in_ms({2, 102, 101, 103, 102, 101, 102, 102})));
  // Nothing delayed, or one reply late.
  CHECK(!read_slow_down(in_ms({2, 2, 2, 2, 2, 2, 2, 2})));
  CHECK(!read_slow_down(in_ms({2, 2, 2, 2, 2, 2, 2, 80})));
  // Fast again past N: not one window's count.
  CHECK(!read_slow_down(in_ms({2, 2, 102, 2, 202, 302})));
  // Growth that is not a step each (doubling).
  CHECK(!read_slow_down(in_ms({2, 2, 12, 22, 42, 82, 162, 322})));
  // A step within the noise of a slow reply.
  CHECK(!read_slow_down(in_ms({20, 20, 30, 40, 50, 60})));
  CHECK(!read_slow_down(in_ms({2, 102, 202})));
}

TEST_CASE("slow-down probe: a reply at the unloaded latency") {
  const auto steps = read_slow_down(in_ms({2, 2, 102, 202, 302}));
  REQUIRE(steps);
  CHECK(unloaded_reply(*steps, 3 * k_slow_ms));
  CHECK(!unloaded_reply(*steps, 60 * k_slow_ms));
}

TEST_CASE("slow-down probe: the flags snap the window, step and longest delay") {
  InferredContract inferred;
  inferred.algorithm = "slow-down";
  inferred.anchor = "first-hit";
  inferred.limit = 3;
  inferred.window_ms = 3040;
  inferred.window_tolerance_ms = 60;
  inferred.delay_step_ms = 100.7;
  inferred.delay_step_tolerance_ms = 1.5;
  inferred.max_delay_ms = 1003;
  inferred.max_delay_tolerance_ms = 8;
  CHECK(contract_flags(inferred) == "--contract slow-down:first-hit:3/3s,100ms,1s");
  CHECK(contract_spec(inferred) == "slow-down:first-hit:3/3s,100ms,1s");
  // No longest delay reached: no flags (either reading of the longest delay can fail pasted
  // back), the reading in a note. A step no round value lies near: as measured.
  inferred.max_delay_ms.reset();
  inferred.delay_step_ms = 73.4;
  inferred.delay_step_tolerance_ms = 0.5;
  CHECK(suggest_flags(inferred).empty());
  CHECK(inferred.confidence == "low");
  REQUIRE(!inferred.notes.empty());
  CHECK(inferred.notes.back().starts_with("no flags: no longest delay was reached"));
  CHECK(inferred.notes.back().find("slow-down:first-hit:3/3s,73ms (add `,MAX`") !=
        std::string::npos);
}
