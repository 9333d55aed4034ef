#pragma once
// A slow-down seen from outside, the pure half of the probe's slow-down reading
// (app/probe_slow_down): nothing is denied, the first N requests of a window are answered at
// the unloaded latency, and each one past N D later than the one before, up to a longest
// delay. Requests sent one at a time are read in send order; a batch sent at once by the rank
// of its latencies (the order the limiter counted them in).

#include <cstdint>
#include <optional>
#include <span>

namespace rlcheck::checks {

// Below this, a step cannot be told from a reply read late (a loaded machine).
constexpr int64_t k_least_slow_down_noise_ns = 10'000'000;
// What a limiter's own timers add to a step or a delay: a millisecond, and 2 % of it.
constexpr int64_t k_slow_down_timer_ns = 1'000'000;
constexpr double k_slow_down_timer_share = 0.02;

struct SlowDownSteps {
  int64_t after = 0;        // N: answered at the unloaded latency
  int64_t unloaded_ns = 0;  // the median of their latencies
  int64_t noise_ns = 0;     // how far above the fastest an unloaded reply may lie
  double step_ns = 0;       // D: each delayed request this much later than the one before
  double step_tolerance_ns = 0;
  int64_t growing = 0;  // delayed requests that grew by a step each
  // The level the delays stopped growing at (extra latency beyond the unloaded one), when a
  // delayed request at least grew by less than a step; unset when every delayed request grew.
  std::optional<double> cap_ns;
  double cap_tolerance_ns = 0;
};

// Whether `latencies` (ns, in the order the limiter counted them) read as a slow-down: every
// one answered, N >= 1 unloaded (above the fastest by less than the larger of the noise, 10 ms
// or twice the fastest, and half the median rise past the noise between successive replies)
// and every later one above that, at least two delayed requests growing by a step of at
// least twice the noise (each adding more than 3/4 of the first delay), each within the noise
// and a quarter step of k x D, and after them any requests at one level (the cap, no further
// than the next step above the last growing delay), each within the noise and a quarter step
// of their median. The step is
// the median of the slopes between every two of (0, 0) and the growing delays (Theil and Sen),
// its tolerance the worst delay's distance from the line and the noise, over the growing ones,
// and the limiter's timers. The cap's tolerance is its level's spread, the noise and the timers.
// `slack_ns` widens each of those bounds (a delay's distance from the line, the growth a delayed
// request must show past half the first delay, the cap's level and tolerance) for replies a loaded
// machine read late, where what is read is replayed before it is used (the contract fit); the
// probe reads with none.
std::optional<SlowDownSteps> read_slow_down(std::span<const int64_t> latencies,
                                            int64_t slack_ns = 0);

// Whether a reply came at the unloaded latency of `steps`: less than half a step beyond it (a
// request counted past N waits a step at least).
bool unloaded_reply(const SlowDownSteps& steps, int64_t latency_ns);

}  // namespace rlcheck::checks
