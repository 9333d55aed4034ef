#include "engine/live_stats.hpp"

#include <doctest/doctest.h>

#include <thread>
#include <vector>

using rlcheck::engine::ErrorKind;
using rlcheck::engine::k_live_latency_buckets;
using rlcheck::engine::live_latency_bucket;
using rlcheck::engine::live_latency_upper_ns;
using rlcheck::engine::LiveSnapshot;
using rlcheck::engine::LiveStats;
using rlcheck::engine::Outcome;

TEST_CASE("live stats: latency buckets are 8 a power of two, each value under its upper edge") {
  CHECK(live_latency_bucket(0) == 0);
  CHECK(live_latency_bucket(1023) == 0);
  CHECK(live_latency_bucket(1024) == 1);
  CHECK(live_latency_upper_ns(0) == 1024);
  CHECK(live_latency_upper_ns(1) == 1152);  // 1024 + 1024/8
  CHECK(live_latency_bucket(1151) == 1);
  CHECK(live_latency_bucket(1152) == 2);
  CHECK(live_latency_bucket(2048) == 9);
  CHECK(live_latency_bucket(int64_t{1} << 40) == k_live_latency_buckets - 1);
  for (int64_t value : {int64_t{1}, int64_t{1500}, int64_t{999'999}, int64_t{1'000'000},
                        int64_t{123'456'789}, int64_t{60'000'000'000}}) {
    const size_t bucket = live_latency_bucket(value);
    CHECK(value < live_latency_upper_ns(bucket));
    if (bucket > 0)
      CHECK(value >= live_latency_upper_ns(bucket - 1));
  }
  for (size_t b = 1; b < k_live_latency_buckets; ++b)
    CHECK(live_latency_upper_ns(b) > live_latency_upper_ns(b - 1));
}

TEST_CASE("live stats: each latency counted under the first metric bound it does not exceed") {
  LiveStats live;
  auto& cell = live.cell(0);
  // 1 ms exactly is within le=0.001; a hair over is not (it straddles a fine bucket there).
  for (int64_t ns : {int64_t{1'000'000}, int64_t{1'000'001}, int64_t{1'040'000}, int64_t{99'999},
                     int64_t{20'000'000'000}})
    cell.latency(ns);
  const LiveSnapshot snapshot = live.snapshot();
  CHECK(snapshot.within_bound[0] == 1);  // <= 0.1 ms
  CHECK(snapshot.within_bound[3] == 1);  // <= 1 ms
  CHECK(snapshot.within_bound[4] == 2);  // <= 2.5 ms
  uint64_t bounded = 0;
  for (const uint64_t count : snapshot.within_bound)
    bounded += count;
  CHECK(bounded == 4);  // 20 s is past the last bound: only +Inf holds it
  CHECK(snapshot.latency_count == 5);
}

TEST_CASE("live stats: a run's counts, monotonic totals, in flight and errors by kind") {
  LiveStats live;
  live.begin_run("", 1);
  auto& cell = live.cell(0);
  for (int i = 0; i < 5; ++i)
    cell.sent();
  cell.decided(Outcome::allowed, ErrorKind::none);
  cell.decided(Outcome::denied, ErrorKind::none);
  cell.decided(Outcome::error, ErrorKind::timeout);
  cell.latency(2'000'000);
  LiveSnapshot now = live.snapshot();
  CHECK(now.running);
  CHECK(now.total.sent == 5);
  CHECK(now.in_flight == 2);
  CHECK(now.errors[static_cast<size_t>(ErrorKind::timeout)] == 1);
  CHECK(now.latency_count == 1);
  CHECK(now.latency_sum_ns == 2'000'000);
  REQUIRE(now.runs.size() == 1);
  CHECK(now.runs[0].counts.done() == 3);
  live.end_run();

  live.begin_run("", 2);
  live.cell(1).sent();
  live.cell(1).decided(Outcome::denied, ErrorKind::none);
  now = live.snapshot();
  REQUIRE(now.runs.size() == 2);
  CHECK(now.runs[0].counts.decided == std::array<uint64_t, 3>{1, 1, 1});
  CHECK(now.runs[1].counts.decided == std::array<uint64_t, 3>{0, 1, 0});
  CHECK(now.runs[1].counts.sent == 1);
  CHECK(now.total.done() == 4);
  live.end_run();
  CHECK_FALSE(live.snapshot().running);

  // --verify-retry-after's retry, after the last run ended: in that run's counts and the totals.
  live.decided_after_run(Outcome::allowed, ErrorKind::none);
  now = live.snapshot();
  CHECK(now.total.sent == 7);
  CHECK(now.total.done() == 5);
  CHECK(now.in_flight == 2);
  REQUIRE(now.runs.size() == 2);
  CHECK(now.runs[0].counts.decided == std::array<uint64_t, 3>{1, 1, 1});
  CHECK(now.runs[1].counts.decided == std::array<uint64_t, 3>{1, 1, 0});
  CHECK(now.runs[1].counts.sent == 2);
}

TEST_CASE("live stats: 4 writers and a reader, totals exact after join" *
          doctest::test_suite("threads")) {
  constexpr int k_writers = 4;
  constexpr uint64_t k_each = 100'000;
  LiveStats live;
  live.begin_run("", 1);
  std::atomic<bool> finished{false};
  // The writers start once the reader has read: on a busy machine the reader's thread may
  // otherwise be scheduled only after they finished, and read nothing but the totals.
  std::atomic<bool> reading{false};
  bool monotonic = true;
  std::thread reader([&] {
    uint64_t last_done = 0;
    while (!finished.load()) {
      const LiveSnapshot now = live.snapshot();
      monotonic = monotonic && now.total.done() >= last_done && now.total.sent >= now.total.done();
      last_done = now.total.done();
      reading = true;
    }
  });
  while (!reading.load())
    std::this_thread::yield();
  std::vector<std::thread> writers;
  for (int t = 0; t < k_writers; ++t) {
    writers.emplace_back([&live, t] {
      auto& cell = live.cell(t);
      for (uint64_t i = 0; i < k_each; ++i) {
        cell.sent();
        const auto outcome = static_cast<Outcome>(i % 3);
        cell.decided(outcome, outcome == Outcome::error ? ErrorKind::reset : ErrorKind::none);
        if (outcome != Outcome::error)
          cell.latency(static_cast<int64_t>(i));
      }
    });
  }
  for (auto& writer : writers)
    writer.join();
  finished = true;
  reader.join();
  live.end_run();

  const LiveSnapshot now = live.snapshot();
  CHECK(monotonic);
  CHECK(now.total.sent == k_writers * k_each);
  CHECK(now.total.done() == k_writers * k_each);
  CHECK(now.in_flight == 0);
  const uint64_t errors_each = (k_each + 1) / 3;  // i % 3 == 2 for i < k_each
  CHECK(now.total.decided[2] == k_writers * errors_each);
  CHECK(now.errors[static_cast<size_t>(ErrorKind::reset)] == k_writers * errors_each);
  CHECK(now.latency_count == k_writers * (k_each - errors_each));
  REQUIRE(now.runs.size() == 1);
  CHECK(now.runs[0].counts.done() == k_writers * k_each);
}

TEST_CASE("live stats: each run's errors by kind and latencies apart, for the metrics' labels") {
  LiveStats live;
  live.begin_run("naive", 1);
  live.cell(0).sent();
  live.cell(0).decided(Outcome::error, ErrorKind::timeout);
  live.cell(0).sent();
  live.cell(0).decided(Outcome::allowed, ErrorKind::none);
  live.cell(0).latency(2'000'000);
  live.end_run();
  live.begin_run("lua", 1);
  live.cell(1).sent();
  live.cell(1).decided(Outcome::error, ErrorKind::reset);
  live.cell(1).sent();
  live.cell(1).decided(Outcome::denied, ErrorKind::none);
  live.cell(1).latency(50'000);
  LiveSnapshot now = live.snapshot();  // lua's run under way
  REQUIRE(now.runs.size() == 2);
  const auto timeout = static_cast<size_t>(ErrorKind::timeout);
  const auto reset = static_cast<size_t>(ErrorKind::reset);
  CHECK(now.runs[0].detail.errors[timeout] == 1);
  CHECK(now.runs[0].detail.errors[reset] == 0);
  CHECK(now.runs[0].detail.within_bound[4] == 1);  // 2 ms: le 2.5 ms
  CHECK(now.runs[0].detail.latency_count == 1);
  CHECK(now.runs[0].detail.latency_sum_ns == 2'000'000);
  CHECK(now.runs[1].detail.errors[timeout] == 0);
  CHECK(now.runs[1].detail.errors[reset] == 1);
  CHECK(now.runs[1].detail.within_bound[0] == 1);  // 50 us: le 0.1 ms
  CHECK(now.runs[1].detail.latency_count == 1);
  CHECK(now.runs[1].detail.latency_sum_ns == 50'000);
  live.end_run();

  // --verify-retry-after's retry errs after the last run: that run's errors.
  live.decided_after_run(Outcome::error, ErrorKind::timeout);
  now = live.snapshot();
  CHECK(now.runs[1].detail.errors[timeout] == 1);
  CHECK(now.runs[0].detail.errors[timeout] == 1);
  CHECK(now.errors[timeout] == 2);
}
