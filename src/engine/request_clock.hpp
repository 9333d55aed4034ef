#pragma once
// The time a request reads for its {now_ms} and {now_s}: the wall clock, or the instant a
// virtual clock gave it (--virtual-clock), plus the skew of the client that sends it
// (--clock-skew).

#include <chrono>
#include <cstdint>

namespace rlcheck::engine {

// The wall clock, in Unix nanoseconds.
inline int64_t wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The steady clock, in nanoseconds since its own epoch.
inline int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The first whole millisecond after `unix_ns`: where a virtual clock starts, so that {now_ms}
// and the records name the same instants.
inline int64_t next_whole_ms(int64_t unix_ns) {
  constexpr int64_t k_ms = 1'000'000;
  return (unix_ns / k_ms + 1) * k_ms;
}

struct RequestClock {
  int64_t virtual_unix_ns = 0;  // the request's virtual instant; 0 reads the wall clock
  int64_t skew_ns = 0;          // added to either: this client's clock is off by it

  // Unix nanoseconds, read once per request so {now_ms} and {now_s} name one instant.
  int64_t read_ns() const {
    return (virtual_unix_ns != 0 ? virtual_unix_ns : wall_now_ns()) + skew_ns;
  }
};

// Copies a request's clock field by field, as it was written: the worker writes a request's
// clock just before the client copies it, and a 16-byte copy of two 8-byte stores waits for
// them to leave the store buffer (3 % of a pipelined request's CPU, measured). Copies after
// that point to it instead (PlaceholderContext::clock).
inline void copy_clock(RequestClock& to, const RequestClock& from) {
  to.virtual_unix_ns = from.virtual_unix_ns;
  to.skew_ns = from.skew_ns;
}

// Floor division, so an instant before the epoch's unit still rounds down.
inline int64_t floor_div(int64_t value, int64_t unit) {
  const int64_t quotient = value / unit;
  return (value % unit != 0 && (value < 0) != (unit < 0)) ? quotient - 1 : quotient;
}

}  // namespace rlcheck::engine
