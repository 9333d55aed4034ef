#include "engine/live_stats.hpp"

#include <algorithm>
#include <bit>

namespace rlcheck::engine {
namespace {

constexpr int k_first_octave = 10;  // 2^10 ns: where the buckets start splitting

}  // namespace

size_t live_latency_bucket(int64_t ns) {
  if (ns < (int64_t{1} << k_first_octave))
    return 0;
  const int octave = std::bit_width(static_cast<uint64_t>(ns)) - 1;
  const auto sub = static_cast<size_t>((static_cast<uint64_t>(ns) >> (octave - 3)) & 7);
  const size_t bucket = 1 + static_cast<size_t>(octave - k_first_octave) * 8 + sub;
  return std::min(bucket, k_live_latency_buckets - 1);
}

int64_t live_latency_upper_ns(size_t bucket) {
  if (bucket == 0)
    return int64_t{1} << k_first_octave;
  const int octave = k_first_octave + static_cast<int>((bucket - 1) / 8);
  const auto sub = static_cast<int64_t>((bucket - 1) % 8);
  return (8 + sub + 1) << (octave - 3);
}

LiveCounts& LiveCounts::operator-=(const LiveCounts& other) {
  sent -= other.sent;
  for (size_t i = 0; i < decided.size(); ++i)
    decided[i] -= other.decided[i];
  return *this;
}

LiveDetail& LiveDetail::operator+=(const LiveDetail& other) {
  for (size_t k = 0; k < errors.size(); ++k)
    errors[k] += other.errors[k];
  for (size_t b = 0; b < within_bound.size(); ++b)
    within_bound[b] += other.within_bound[b];
  latency_count += other.latency_count;
  latency_sum_ns += other.latency_sum_ns;
  return *this;
}

LiveDetail& LiveDetail::operator-=(const LiveDetail& other) {
  for (size_t k = 0; k < errors.size(); ++k)
    errors[k] -= other.errors[k];
  for (size_t b = 0; b < within_bound.size(); ++b)
    within_bound[b] -= other.within_bound[b];
  latency_count -= other.latency_count;
  latency_sum_ns -= other.latency_sum_ns;
  return *this;
}

void LiveCell::decided(Outcome outcome, ErrorKind error, uint64_t count) {
  bump(decided_[static_cast<size_t>(outcome)], count);
  if (outcome == Outcome::error)
    bump(errors_[static_cast<size_t>(error) % k_live_error_kinds], count);
}

void LiveCell::latency(int64_t ns) {
  bump(latency_[live_latency_bucket(ns)]);
  // From the smallest: most latencies are within the first few bounds.
  for (size_t bound = 0; bound < k_live_metric_bounds_ns.size(); ++bound) {
    if (ns <= k_live_metric_bounds_ns[bound]) {
      bump(within_bound_[bound]);
      break;
    }
  }
  bump(latency_sum_ns_, static_cast<uint64_t>(std::max<int64_t>(0, ns)));
}

LiveStats::~LiveStats() {
  for (std::atomic<LiveCell*>& cell : cells_)
    delete cell.load(std::memory_order_relaxed);
}

LiveCell& LiveStats::cell(int thread) {
  const int index = std::clamp(thread, 0, k_live_cells - 1);
  std::atomic<LiveCell*>& slot = cells_[static_cast<size_t>(index)];
  LiveCell* cell = slot.load(std::memory_order_acquire);
  if (cell == nullptr) {
    auto made = std::make_unique<LiveCell>();
    if (slot.compare_exchange_strong(cell, made.get(), std::memory_order_acq_rel))
      cell = made.release();  // else `cell` is the one another thread made
  }
  int used = cells_used_.load(std::memory_order_relaxed);
  while (used < index + 1 &&
         !cells_used_.compare_exchange_weak(used, index + 1, std::memory_order_release)) {
  }
  return *cell;
}

LiveCounts LiveStats::totals() const {
  LiveCounts counts;
  // Decisions before sends: a request is counted sent before it is decided, so in-flight
  // counts read this way never go below zero.
  each_cell([&](const LiveCell& cell) {
    for (size_t o = 0; o < counts.decided.size(); ++o)
      counts.decided[o] += cell.decided_[o].load(std::memory_order_relaxed);
  });
  each_cell(
      [&](const LiveCell& cell) { counts.sent += cell.sent_.load(std::memory_order_relaxed); });
  return counts;
}

LiveDetail LiveStats::detail_totals() const {
  LiveDetail detail;
  each_cell([&](const LiveCell& cell) {
    for (size_t k = 0; k < k_live_error_kinds; ++k)
      detail.errors[k] += cell.errors_[k].load(std::memory_order_relaxed);
    for (size_t b = 0; b < k_live_metric_bounds_ns.size(); ++b)
      detail.within_bound[b] += cell.within_bound_[b].load(std::memory_order_relaxed);
    detail.latency_sum_ns += cell.latency_sum_ns_.load(std::memory_order_relaxed);
    for (size_t b = 0; b < k_live_latency_buckets; ++b)
      detail.latency_count += cell.latency_[b].load(std::memory_order_relaxed);
  });
  return detail;
}

LiveCounts LiveStats::since_base() const {
  LiveCounts counts = totals();
  counts -= base_;
  return counts;
}

LiveDetail LiveStats::detail_since_base() const {
  LiveDetail detail = detail_totals();
  detail -= base_detail_;
  return detail;
}

void LiveStats::settle_last_run() {
  runs_.back().counts = since_base();
  runs_.back().detail = detail_since_base();
}

void LiveStats::begin_run(std::string target, int run) {
  std::lock_guard lock(mutex_);
  if (running_)
    settle_last_run();
  base_ = totals();
  base_detail_ = detail_totals();
  runs_.push_back({std::move(target), run, {}, {}});
  running_ = true;
  each_cell([](LiveCell& cell) { cell.virtual_ns_.store(0, std::memory_order_relaxed); });
}

void LiveStats::end_run() {
  std::lock_guard lock(mutex_);
  if (!running_)
    return;
  settle_last_run();
  running_ = false;
}

void LiveStats::decided_after_run(Outcome outcome, ErrorKind error) {
  LiveCell& any = cell(0);
  any.sent();
  any.decided(outcome, error);
  std::lock_guard lock(mutex_);
  if (!running_ && !runs_.empty())
    settle_last_run();
}

LiveSnapshot LiveStats::snapshot() const {
  LiveSnapshot snapshot;
  {
    std::lock_guard lock(mutex_);
    snapshot.total = totals();
    snapshot.runs = runs_;
    snapshot.running = running_;
    if (running_) {
      snapshot.runs.back().counts = snapshot.total;
      snapshot.runs.back().counts -= base_;
      snapshot.runs.back().detail = detail_since_base();
    }
  }
  each_cell([&](const LiveCell& cell) {
    for (size_t k = 0; k < k_live_error_kinds; ++k)
      snapshot.errors[k] += cell.errors_[k].load(std::memory_order_relaxed);
    for (size_t b = 0; b < k_live_latency_buckets; ++b)
      snapshot.latency[b] += cell.latency_[b].load(std::memory_order_relaxed);
    for (size_t b = 0; b < k_live_metric_bounds_ns.size(); ++b)
      snapshot.within_bound[b] += cell.within_bound_[b].load(std::memory_order_relaxed);
    snapshot.latency_sum_ns += cell.latency_sum_ns_.load(std::memory_order_relaxed);
    snapshot.virtual_ns =
        std::max(snapshot.virtual_ns, cell.virtual_ns_.load(std::memory_order_relaxed));
  });
  for (const uint64_t count : snapshot.latency)
    snapshot.latency_count += count;
  const uint64_t done = snapshot.total.done();
  snapshot.in_flight = snapshot.total.sent > done ? snapshot.total.sent - done : 0;
  return snapshot;
}

}  // namespace rlcheck::engine
