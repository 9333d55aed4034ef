#pragma once
// The one-line status a long run prints on a non-terminal stderr (CI logs): from two minutes
// in, one line a minute with the requests done, allowed, denied and errored, the rate and the
// time elapsed, so a soak test's log shows it is alive. Pure: the caller owns the clock.

#include <chrono>
#include <cstdint>
#include <string>

namespace rlcheck::runner {

struct StatusCounts {
  uint64_t done = 0;  // requests that got a decision or an error
  uint64_t allowed = 0;
  uint64_t denied = 0;
  uint64_t errors = 0;
};

// When lines are due: the first at `first`, then one every `every`. A check that comes late
// prints one line, not the ones it missed.
class StatusSchedule {
 public:
  explicit StatusSchedule(std::chrono::nanoseconds first = std::chrono::minutes(2),
                          std::chrono::nanoseconds every = std::chrono::minutes(1))
      : next_(first), every_(every) {}
  // True when a line is due at `elapsed` (then the next is scheduled).
  bool due(std::chrono::nanoseconds elapsed);

 private:
  std::chrono::nanoseconds next_;
  std::chrono::nanoseconds every_;
};

// "rlcheck: lua run 1/4: 1200000 requests done (1000 allowed, 1199000 denied, 0 errors),
// 10000/s, 2m00s elapsed"
std::string format_status(const std::string& label, const StatusCounts& counts,
                          std::chrono::nanoseconds elapsed);

}  // namespace rlcheck::runner
