#include "checks/slow_down_probe.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rlcheck::checks {

namespace {

double middle_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The step through (0, 0) and the first `growing` delays (`worst`: the furthest from it), and
// the level of the rest; false when either does not hold.
bool fit_steps(const std::vector<double>& extra, size_t growing, double slack, SlowDownSteps& steps,
               double& worst) {
  std::vector<double> slopes;
  for (size_t j = 0; j < growing; ++j) {
    slopes.push_back(extra[j] / static_cast<double>(j + 1));  // from (0, 0)
    for (size_t i = 0; i < j; ++i)
      slopes.push_back((extra[j] - extra[i]) / static_cast<double>(j - i));
  }
  const double step = middle_of(std::move(slopes));
  const auto noise = static_cast<double>(steps.noise_ns);
  if (step < 2 * noise)
    return false;
  worst = 0;
  for (size_t k = 0; k < growing; ++k)
    worst = std::max(worst, std::abs(extra[k] - step * static_cast<double>(k + 1)));
  if (worst > noise + step / 4 + slack)
    return false;
  const auto timers = [](double duration) {
    return std::max(static_cast<double>(k_slow_down_timer_ns), k_slow_down_timer_share * duration);
  };
  std::optional<double> cap;
  double spread = 0;
  if (growing < extra.size()) {
    // Every delay after the growing ones at one level: the longest delay.
    std::vector<double> level(extra.begin() + static_cast<std::ptrdiff_t>(growing), extra.end());
    cap = middle_of(level);
    for (const double delay : level)
      spread = std::max(spread, std::abs(delay - *cap));
    // A cap holds the delays at or below the next step.
    const double last = extra[growing - 1];
    if (spread > noise + step / 4 + slack || *cap > last + step + noise + step / 4 + slack ||
        *cap < last - noise - step / 4 - slack)
      return false;
  }
  steps.step_ns = step;
  steps.growing = static_cast<int64_t>(growing);
  // The line is off by its worst delay at its far end, over `growing` steps.
  steps.step_tolerance_ns = (worst + noise) / static_cast<double>(growing) + timers(step);
  steps.cap_ns = cap;
  if (cap)
    steps.cap_tolerance_ns = spread + noise + slack + timers(*cap);
  return true;
}

}  // namespace

std::optional<SlowDownSteps> read_slow_down(std::span<const int64_t> latencies, int64_t slack_ns) {
  const auto slack = static_cast<double>(slack_ns);
  if (latencies.size() < 4)
    return std::nullopt;
  const int64_t fastest = *std::min_element(latencies.begin(), latencies.end());
  SlowDownSteps steps;
  steps.noise_ns = std::max(k_least_slow_down_noise_ns, 2 * fastest);
  // A step's size at a guess, the median of the rises past the noise: a reply slower than the
  // fastest by less than half of it is unloaded (a first request that opened a connection).
  std::vector<double> rises;
  for (size_t i = 1; i < latencies.size(); ++i) {
    if (latencies[i] - latencies[i - 1] > steps.noise_ns)
      rises.push_back(static_cast<double>(latencies[i] - latencies[i - 1]));
  }
  if (rises.empty())
    return std::nullopt;
  const int64_t unloaded_below =
      fastest + std::max<int64_t>(steps.noise_ns, std::llround(middle_of(rises) / 2));
  while (steps.after < static_cast<int64_t>(latencies.size()) &&
         latencies[steps.after] <= unloaded_below) {
    ++steps.after;
  }
  const auto n = static_cast<int64_t>(latencies.size());
  if (steps.after == 0 || n - steps.after < 2)
    return std::nullopt;
  std::vector<double> unloaded;
  for (int64_t i = 0; i < steps.after; ++i)
    unloaded.push_back(static_cast<double>(latencies[i]));
  steps.unloaded_ns = std::llround(middle_of(unloaded));
  std::vector<double> extra;  // extra[k - 1]: the k-th delayed request's delay
  for (int64_t i = steps.after; i < n; ++i) {
    if (latencies[i] <= unloaded_below)
      return std::nullopt;  // fast again past N: not one window's count
    extra.push_back(static_cast<double>(latencies[i] - steps.unloaded_ns));
  }
  // Growing while each delay adds more than half the first one (less the slack) and more than
  // the noise; the last of them may be a
  // cap between two steps, read as the level when the line does not hold it.
  size_t most_growing = 1;
  while (most_growing < extra.size() &&
         extra[most_growing] - extra[most_growing - 1] >
             std::max(0.5 * extra[0] - slack, static_cast<double>(steps.noise_ns))) {
    ++most_growing;
  }
  if (most_growing < 2)
    return std::nullopt;
  // Of the two readings, the one whose line holds its delays closer by half the noise at
  // least; else the one with more steps.
  SlowDownSteps longer = steps;
  SlowDownSteps shorter = steps;
  double longer_worst = 0;
  double shorter_worst = 0;
  const bool longer_fits = fit_steps(extra, most_growing, slack, longer, longer_worst);
  const bool shorter_fits =
      most_growing > 2 && fit_steps(extra, most_growing - 1, slack, shorter, shorter_worst);
  if (shorter_fits &&
      (!longer_fits || shorter_worst + static_cast<double>(steps.noise_ns) / 2 <= longer_worst))
    return shorter;
  if (longer_fits)
    return longer;
  return std::nullopt;
}

bool unloaded_reply(const SlowDownSteps& steps, int64_t latency_ns) {
  return static_cast<double>(latency_ns - steps.unloaded_ns) < steps.step_ns / 2;
}

}  // namespace rlcheck::checks
