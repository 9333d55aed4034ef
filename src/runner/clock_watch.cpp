#include "runner/clock_watch.hpp"

#include "engine/request_clock.hpp"

namespace rlcheck::runner {

engine::ClockReading read_wall_clock() {
  const int64_t before = engine::steady_now_ns();
  const int64_t wall = engine::wall_now_ns();
  return engine::ClockReading::between(wall, before, engine::steady_now_ns(), 1);
}

ClockWatch::ClockWatch(Target& target, bool enabled) : target_(target) {
  if (!enabled)
    return;
  limiter_ = target_.read_limiter_clock();
  wall_.emplace(read_wall_clock());
}

void ClockWatch::sample() {
  if (wall_)
    wall_->add(read_wall_clock());
}

std::optional<engine::ClockDrift> ClockWatch::finish() {
  if (!wall_)
    return std::nullopt;
  std::optional<engine::ClockDrift> limiter;
  if (limiter_) {
    if (const auto after = target_.read_limiter_clock())
      limiter = engine::drift_between("Redis TIME", *limiter_, *after);
  }
  wall_->add(read_wall_clock());
  return engine::worse_drift(limiter, wall_->drift("this host's wall clock"));
}

}  // namespace rlcheck::runner
