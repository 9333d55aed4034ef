#include "observe/live_window.hpp"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using rlcheck::engine::live_latency_bucket;
using rlcheck::engine::live_latency_upper_ns;
using rlcheck::observe::LiveWindow;
using rlcheck::observe::WindowSample;

namespace {

WindowSample sample(std::chrono::nanoseconds at, uint64_t done) {
  WindowSample s;
  s.at = at;
  s.done = done;
  return s;
}

}  // namespace

TEST_CASE("live window: nothing to say before two samples") {
  LiveWindow window;
  CHECK_FALSE(window.rate());
  CHECK_FALSE(window.percentile_ns(99));
  window.push(sample(0ms, 0));
  CHECK_FALSE(window.rate());
}

TEST_CASE("live window: the rate over the last five samples (one second)") {
  LiveWindow window;
  for (int i = 0; i <= 4; ++i)
    window.push(sample(i * 250ms, static_cast<uint64_t>(i) * 500));
  CHECK(*window.rate() == doctest::Approx(2000.0));
  // A sixth sample drops the first: the window holds 250 ms to 1250 ms.
  window.push(sample(1250ms, 2000 + 100));
  CHECK(*window.rate() == doctest::Approx(100.0 + 1500.0));
}

TEST_CASE("live window: p99 of the latencies recorded inside the window only") {
  LiveWindow window(3);
  WindowSample first = sample(0ms, 0);
  first.latency[live_latency_bucket(500'000'000)] = 1000;  // before the window: not counted
  window.push(first);
  WindowSample second = first;
  second.at = 250ms;
  window.push(second);
  WindowSample third = second;
  third.at = 500ms;
  third.latency[live_latency_bucket(1'000'000)] += 99;
  third.latency[live_latency_bucket(20'000'000)] += 1;
  window.push(third);
  CHECK(*window.percentile_ns(99) == live_latency_upper_ns(live_latency_bucket(1'000'000)));
  CHECK(*window.percentile_ns(100) == live_latency_upper_ns(live_latency_bucket(20'000'000)));
  // The window moves on: the old latencies drop out, none is recent.
  WindowSample fourth = third;
  fourth.at = 750ms;
  window.push(fourth);
  window.push(fourth);
  CHECK_FALSE(window.percentile_ns(99));
  CHECK(*window.rate() == doctest::Approx(0.0));
}
