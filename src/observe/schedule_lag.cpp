#include "observe/schedule_lag.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/count_text.hpp"

namespace rlcheck::observe {
namespace {

constexpr auto k_least_lag = std::chrono::seconds(1);
constexpr int64_t k_lag_share_percent = 10;
constexpr double k_round_trip_floor_s = 20e-6;  // the fastest round trip a connection makes

std::string seconds_text(std::chrono::nanoseconds lag) {
  return fmt::format("{:.1f}s", static_cast<double>(lag.count()) / 1e9);
}

std::string rate_text(double per_s) {
  return fmt::format("{:.0f}/s", per_s);
}

double peak_rate_per_s(const config::LoadConfig& load) {
  if (load.rate) {
    return static_cast<double>(load.rate->tokens) * 1e9 /
           static_cast<double>(load.rate->period.count());
  }
  double peak = 0;
  for (const config::Stage& stage : load.stages)
    peak = std::max(peak, stage.to_per_s);
  return peak;
}

}  // namespace

bool behind_schedule(std::chrono::nanoseconds lag, std::chrono::nanoseconds elapsed) {
  return lag > k_least_lag && lag.count() * 100 > elapsed.count() * k_lag_share_percent;
}

ScheduleLag::ScheduleLag(std::shared_ptr<const engine::Schedule> schedule, uint64_t requests,
                         uint64_t share_count, uint64_t share_index)
    : schedule_(std::move(schedule)),
      requests_(requests),
      share_count_(std::max<uint64_t>(share_count, 1)),
      share_index_(share_index) {}

std::chrono::nanoseconds ScheduleLag::lag(std::chrono::nanoseconds elapsed, uint64_t sent) const {
  // This process's s-th request is the run's (s x share_count + share_index)-th.
  const uint64_t next = sent * share_count_ + share_index_;
  if (next >= requests_)
    return std::chrono::nanoseconds(0);
  return std::max(std::chrono::nanoseconds(0), elapsed - schedule_->due(next));
}

uint64_t ScheduleLag::due_by(std::chrono::nanoseconds elapsed) const {
  // The first request due after `elapsed`, by bisection: due() does not decrease.
  uint64_t low = 0;
  uint64_t high = requests_;
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    if (schedule_->due(middle) <= elapsed)
      low = middle + 1;
    else
      high = middle;
  }
  // Of the run's first `low` requests, those that are this process's.
  return low > share_index_ ? (low - share_index_ + share_count_ - 1) / share_count_ : 0;
}

double ScheduleLag::rate_due(uint64_t sent) const {
  if (requests_ == 0)
    return 0;
  const uint64_t next = std::min(sent * share_count_ + share_index_, requests_ - 1);
  return schedule_->rate_at(schedule_->due(next).count());
}

std::string lag_warning(const LagSample& sample) {
  const std::string slots = config::counted(static_cast<int64_t>(sample.slots), "in-flight slot");
  const std::string why =
      sample.slots > 0 && sample.in_flight >= sample.slots
          ? fmt::format(
                "every one of the {} (-p x --pipeline) was busy: the target answers slower than "
                "{} needs over them; raise -p or --pipeline, or lower the rate",
                slots, rate_text(sample.rate_per_s))
          : fmt::format(
                "rlcheck cannot send at {} here ({} of the {} busy); lower the rate, or add "
                "--threads",
                rate_text(sample.rate_per_s), sample.in_flight, slots);
  return fmt::format(
      "warning: run {} is {} behind its schedule (sent {} of {} due): {}; the load measured is "
      "not the one planned",
      sample.run, seconds_text(sample.lag), sample.sent, sample.due, why);
}

std::optional<std::string> rate_ceiling_warning(const config::Config& config) {
  const config::LoadConfig& load = config.load;
  if (!load.open_model() || load.virtual_clock || config.find_max.enabled)
    return std::nullopt;
  const double peak = peak_rate_per_s(load);
  const double slots = static_cast<double>(load.concurrency) * config.redis.pipeline;
  const double ceiling = slots / k_round_trip_floor_s;
  if (peak <= ceiling)
    return std::nullopt;
  return fmt::format(
      "warning: {} planned, but {} (-p x --pipeline) can carry at most {} (a round trip takes at "
      "least 20us): the run will fall behind its schedule; raise -p or --pipeline, or lower the "
      "rate",
      rate_text(peak), config::counted(static_cast<int64_t>(slots), "in-flight slot"),
      rate_text(ceiling));
}

}  // namespace rlcheck::observe
