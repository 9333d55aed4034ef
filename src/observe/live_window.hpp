#pragma once
// The last second of a run, from the live counts sampled four times a second: the decision
// rate and the p99 latency over the ring of the latest samples (differences of the counters and
// of the latency histogram's buckets). Pure: the caller samples and owns the clock.

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "engine/live_stats.hpp"

namespace rlcheck::observe {

struct WindowSample {
  std::chrono::nanoseconds at{0};  // when it was taken, on any steady clock
  uint64_t done = 0;               // requests decided so far
  engine::LiveLatency latency{};   // the live latency histogram's buckets so far
};

class LiveWindow {
 public:
  // `samples` samples span the window: 5 samples 250 ms apart are the last second.
  explicit LiveWindow(size_t samples = 5) : capacity_(samples < 2 ? 2 : samples) {}

  void push(const WindowSample& sample);

  // Requests decided per second between the oldest and the newest sample; nullopt with fewer
  // than two samples or none apart in time.
  std::optional<double> rate() const;
  // The p-th percentile (0 < p <= 100) of the latencies recorded between the oldest and the
  // newest sample: the upper edge of the bucket holding the nearest-rank value. nullopt when
  // none was recorded.
  std::optional<int64_t> percentile_ns(double p) const;

 private:
  size_t capacity_;
  std::deque<WindowSample> samples_;
};

}  // namespace rlcheck::observe
