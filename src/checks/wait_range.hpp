#pragma once
// The range a denial's wait may lie in (ns from its reply and send), gathered over every
// reading of the limiter's state that could have made the denial.

#include <algorithm>
#include <optional>

namespace rlcheck::checks {

struct WaitRange {
  double low_ns = 0;
  double high_ns = 0;
};

// Takes one more reading's range into `wait`: the union of all so far.
inline void widen(std::optional<WaitRange>& wait, double low_ns, double high_ns) {
  if (!wait) {
    wait = WaitRange{low_ns, high_ns};
    return;
  }
  wait->low_ns = std::min(wait->low_ns, low_ns);
  wait->high_ns = std::max(wait->high_ns, high_ns);
}

// No wait is negative: a range that began in the past begins now.
inline std::optional<WaitRange> from_now(std::optional<WaitRange> wait) {
  if (wait) {
    wait->high_ns = std::max(wait->high_ns, 0.0);
    wait->low_ns = std::clamp(wait->low_ns, 0.0, wait->high_ns);
  }
  return wait;
}

}  // namespace rlcheck::checks
