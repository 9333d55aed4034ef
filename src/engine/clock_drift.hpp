#pragma once
// The limiter's clock against rlcheck's over a run. The audits assume the clock a limiter
// decides by keeps rlcheck's steady clock's rate within 100 ppm; a host whose wall clock is
// stepped or slewed faster than that makes a correct limiter look wrong by the difference.
// Each run reads the clocks the limiter may use (Redis TIME; this host's wall clock, which
// {now_ms} scripts read), each paired with the steady clock (runner/clock_watch), and where the
// difference proves the assumption wrong, the audits allow for all of it.

#include <cstdint>
#include <optional>
#include <string>

namespace rlcheck::engine {

// One reading of a clock the limiter may decide by, paired with the steady clock.
struct ClockReading {
  int64_t clock_ns = 0;        // the clock read (unix ns)
  int64_t steady_ns = 0;       // the steady clock at the reading's midpoint
  int64_t uncertainty_ns = 0;  // half the round trip, plus the clock's resolution

  // `clock_ns`, read at some instant between two readings of the steady clock.
  static ClockReading between(int64_t clock_ns, int64_t steady_before_ns, int64_t steady_after_ns,
                              int64_t resolution_ns) {
    const int64_t half = (steady_after_ns - steady_before_ns) / 2;
    return {clock_ns, steady_before_ns + half, half + resolution_ns};
  }
};

struct ClockDrift {
  std::string source;          // "Redis TIME", "this host's wall clock"
  int64_t ahead_ns = 0;        // how much further the clock moved than the steady clock
  int64_t over_ns = 0;         // the steady time between the first and the last reading
  int64_t uncertainty_ns = 0;  // of any difference of two readings: twice the largest one's
  // What the audits allow for it: 0 while the drift may be within the assumed rate; else the
  // whole difference and its uncertainty (a step may fall inside any one window).
  int64_t slack_ns = 0;
};

// The clock rate the audits assume, in parts per million of the steady clock.
inline constexpr int64_t k_assumed_drift_ppm = 100;

// Readings of one clock over a run: the first, the last, and how far it strayed from the steady
// clock either way in between (a step forward and back again nets to nothing at the ends).
class ClockTrack {
 public:
  explicit ClockTrack(const ClockReading& first);
  void add(const ClockReading& reading);
  // ahead_ns from the first reading to the last; slack_ns from the widest excursion, at the
  // uncertainty of any two readings.
  ClockDrift drift(std::string source) const;

 private:
  ClockReading first_;
  ClockReading last_;
  int64_t low_offset_ns_;   // clock - steady: the least and the most read
  int64_t high_offset_ns_;  //
  int64_t uncertainty_ns_;  // the largest of any reading
};

// The drift of `source` between two readings of it.
ClockDrift drift_between(std::string source, const ClockReading& before, const ClockReading& after);

// Of two drifts measured over a run, the one the audits must allow for: the larger slack, else
// the larger difference.
std::optional<ClockDrift> worse_drift(std::optional<ClockDrift> a, std::optional<ClockDrift> b);

}  // namespace rlcheck::engine
