#pragma once
// What a run has done so far, readable from any thread while it runs: requests sent, decided
// by outcome, errored by kind, and a coarse latency histogram. Each worker thread writes its
// own cache-line-aligned cell (relaxed atomics, one writer each, so no line is shared between
// writers); snapshot() sums the cells. The counters outlive runs and only grow; the counts of
// each run are kept apart too (begin_run / end_run), for the progress line and the metrics'
// `run` label.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/request_record.hpp"

namespace rlcheck::engine {

inline constexpr int k_live_cells = 256;  // one per worker thread (--threads is at most 256)
inline constexpr size_t k_live_error_kinds = 16;
// Bucket 0 holds latencies under 1024 ns; then 8 buckets per power of two up to 2^37 ns
// (~137 s); the last also holds anything longer.
inline constexpr size_t k_live_latency_buckets = 1 + 27 * 8;

size_t live_latency_bucket(int64_t ns);
int64_t live_latency_upper_ns(size_t bucket);  // the bucket's upper edge (exclusive)

using LiveLatency = std::array<uint64_t, k_live_latency_buckets>;

// The bounds of the exported latency histogram (Prometheus' `le`, in ns): each latency is also
// counted, exactly, under the first bound it does not exceed (past the last: none of them).
inline constexpr std::array<int64_t, 16> k_live_metric_bounds_ns = {
    100'000,       250'000,       500'000,       1'000'000,     2'500'000,   5'000'000,
    10'000'000,    25'000'000,    50'000'000,    100'000'000,   250'000'000, 500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
using LiveBounded = std::array<uint64_t, k_live_metric_bounds_ns.size()>;

struct LiveCounts {
  uint64_t sent = 0;                  // requests that left
  std::array<uint64_t, 3> decided{};  // by Outcome: allowed, denied, error
  uint64_t done() const { return decided[0] + decided[1] + decided[2]; }
  LiveCounts& operator-=(const LiveCounts& other);
};

// A run's errors by kind and its latencies in the exported histogram's buckets (the metrics
// label them with their run and target).
struct LiveDetail {
  std::array<uint64_t, k_live_error_kinds> errors{};  // by ErrorKind
  LiveBounded within_bound{};  // decided requests by the first metric bound they are within
  uint64_t latency_count = 0;
  uint64_t latency_sum_ns = 0;
  LiveDetail& operator+=(const LiveDetail& other);
  LiveDetail& operator-=(const LiveDetail& other);
};

struct LiveRun {
  std::string target;  // compare: which target the run was of; empty otherwise
  int run = 0;
  LiveCounts counts;
  LiveDetail detail;
};

struct LiveSnapshot {
  LiveCounts total;                                   // every run so far
  std::array<uint64_t, k_live_error_kinds> errors{};  // by ErrorKind
  uint64_t in_flight = 0;                             // sent, not yet decided
  LiveLatency latency{};                              // decided requests (not errors)
  LiveBounded within_bound{};  // the same requests by the first metric bound they are within
  uint64_t latency_count = 0;
  uint64_t latency_sum_ns = 0;
  std::vector<LiveRun> runs;  // every run begun, in order; the current one last
  bool running = false;       // between begin_run and end_run
  int64_t virtual_ns = 0;     // --virtual-clock: the latest virtual instant the run reached
};

// One worker thread's counters. Only that thread writes them.
class alignas(64) LiveCell {
 public:
  void sent() { bump(sent_); }
  void decided(Outcome outcome, ErrorKind error, uint64_t count = 1);
  void latency(int64_t ns);
  void reached_virtual(int64_t ns) {
    if (ns > virtual_ns_.load(std::memory_order_relaxed))
      virtual_ns_.store(ns, std::memory_order_relaxed);
  }

 private:
  friend class LiveStats;
  static void bump(std::atomic<uint64_t>& counter, uint64_t by = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }

  std::atomic<uint64_t> sent_{0};
  std::array<std::atomic<uint64_t>, 3> decided_{};
  std::array<std::atomic<uint64_t>, k_live_error_kinds> errors_{};
  std::atomic<uint64_t> latency_sum_ns_{0};
  std::atomic<int64_t> virtual_ns_{0};
  std::array<std::atomic<uint64_t>, k_live_latency_buckets> latency_{};
  std::array<std::atomic<uint64_t>, k_live_metric_bounds_ns.size()> within_bound_{};
};

class LiveStats {
 public:
  LiveStats() = default;
  ~LiveStats();
  LiveStats(const LiveStats&) = delete;
  LiveStats& operator=(const LiveStats&) = delete;

  // The cell of worker thread `thread` (0 to k_live_cells - 1).
  LiveCell& cell(int thread);

  // Called between runs, when no worker thread writes: the counts from here to end_run are
  // run `run` of `target`.
  void begin_run(std::string target, int run);
  void end_run();
  // A request sent and decided after its run ended (--verify-retry-after's retry), when no
  // worker thread writes: counted in the totals and in the last run's counts.
  void decided_after_run(Outcome outcome, ErrorKind error);

  // The sums over every cell; from any thread, at any time.
  LiveSnapshot snapshot() const;

 private:
  LiveCounts totals() const;
  LiveDetail detail_totals() const;
  // The current (or last) run's counts and detail; under mutex_.
  LiveCounts since_base() const;
  LiveDetail detail_since_base() const;
  void settle_last_run();  // the last run's counts and detail, from the totals; under mutex_

  // Made on first use (2 KiB each: a process writes one or a few of them), published by the
  // pointer's release; readers skip the ones not made yet.
  std::array<std::atomic<LiveCell*>, k_live_cells> cells_{};
  std::atomic<int> cells_used_{0};
  // Calls f on each cell made so far.
  template <class F>
  void each_cell(F&& f) const {
    const int used = cells_used_.load(std::memory_order_acquire);
    for (int i = 0; i < used; ++i) {
      if (LiveCell* made = cells_[static_cast<size_t>(i)].load(std::memory_order_acquire))
        f(*made);
    }
  }
  mutable std::mutex mutex_;  // guards runs_, base_ and running_
  std::vector<LiveRun> runs_;
  LiveCounts base_;  // the totals when the current run began
  LiveDetail base_detail_;
  bool running_ = false;
};

}  // namespace rlcheck::engine
