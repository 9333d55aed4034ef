#include "observe/live_window.hpp"

#include <cmath>

namespace rlcheck::observe {

void LiveWindow::push(const WindowSample& sample) {
  samples_.push_back(sample);
  while (samples_.size() > capacity_)
    samples_.pop_front();
}

std::optional<double> LiveWindow::rate() const {
  if (samples_.size() < 2)
    return std::nullopt;
  const WindowSample& oldest = samples_.front();
  const WindowSample& newest = samples_.back();
  const auto span = (newest.at - oldest.at).count();
  if (span <= 0)
    return std::nullopt;
  const uint64_t done = newest.done >= oldest.done ? newest.done - oldest.done : 0;
  return static_cast<double>(done) * 1e9 / static_cast<double>(span);
}

std::optional<int64_t> LiveWindow::percentile_ns(double p) const {
  if (samples_.size() < 2)
    return std::nullopt;
  const engine::LiveLatency& oldest = samples_.front().latency;
  const engine::LiveLatency& newest = samples_.back().latency;
  engine::LiveLatency recent{};
  uint64_t count = 0;
  for (size_t b = 0; b < recent.size(); ++b) {
    recent[b] = newest[b] >= oldest[b] ? newest[b] - oldest[b] : 0;
    count += recent[b];
  }
  if (count == 0)
    return std::nullopt;
  const auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count)));
  uint64_t seen = 0;
  for (size_t b = 0; b < recent.size(); ++b) {
    seen += recent[b];
    if (seen >= rank && recent[b] > 0)
      return engine::live_latency_upper_ns(b);
  }
  return engine::live_latency_upper_ns(recent.size() - 1);
}

}  // namespace rlcheck::observe
