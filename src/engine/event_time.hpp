#pragma once
// Durations as libevent and the socket APIs take them.

#include <chrono>

#include <sys/time.h>

namespace rlcheck::engine {

inline timeval to_timeval(std::chrono::nanoseconds d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

}  // namespace rlcheck::engine
