#pragma once
// How far this host's clocks are from the coordinator's (many hosts). Each sample is one TIME
// command: the coordinator read its clock somewhere between the instants the command left and
// its reply came back, so the sample with the shortest round trip bounds the offset best: the
// true offset lies within half that round trip (plus TIME's microsecond) of its estimate.

#include <cstdint>
#include <span>

namespace rlcheck::coord {

struct ClockSample {
  int64_t steady_before_ns = 0;  // this host's steady clock when TIME left
  int64_t steady_after_ns = 0;   // ... and when its reply came back
  int64_t wall_before_ns = 0;    // the same instants on this host's wall clock (epoch)
  int64_t wall_after_ns = 0;
  int64_t remote_ns = 0;  // the coordinator's TIME (epoch), to the microsecond
};

struct ClockEstimate {
  int64_t steady_offset_ns = 0;  // coordinator time - this host's steady clock
  int64_t wall_offset_ns = 0;    // coordinator time - this host's wall clock (reported)
  int64_t uncertainty_ns = 0;    // |true offset - estimate| is at most this
  int64_t round_trip_ns = 0;     // of the sample used
};

// The estimate from the sample with the shortest round trip; samples must not be empty.
ClockEstimate estimate_clock(std::span<const ClockSample> samples);

// The most two workers' estimates can disagree by: the sum of the two largest uncertainties
// (one worker alone: its own).
int64_t pairwise_uncertainty(std::span<const int64_t> uncertainties_ns);

}  // namespace rlcheck::coord
