#pragma once
// The open model's offered rate for the HTML timeline: what was sent per second over the run
// against what the schedule planned, in bins chosen so that a schedule kept draws flat.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/schedule.hpp"

namespace rlcheck::checks {

struct RateBin {
  int64_t from_ns = 0;  // the span of the run it stands for, from the start line
  int64_t to_ns = 0;
  double sent_per_s = 0;     // the requests sent in it, per second of it
  double planned_per_s = 0;  // the schedule's rate at its middle (0 past the plan)
};

// One request that left: its index in the schedule and when it left, from the start line.
struct SentRequest {
  uint64_t index = 0;
  int64_t sent_ns = 0;
};

// At most this many bins cover the plan (more when sends ran late past its end).
inline constexpr uint64_t k_rate_bins = 50;

// Bins `sent` (every request that left, in any order) against `schedule`, an open model's.
// Uniform arrivals: each bin stands for a whole number of planned requests, from the instant
// the first is due to the instant the next bin's first is, and its rate is what it counted over
// the time those requests take. Poisson arrivals: bins of equal width from the start line (the
// arrivals are random). A request counts in the bin it was due in when it left less than that
// bin's width from its due instant (a bin is the line's resolution: a send a little late is the
// same load, not a dip and a spike), else in the bin it left in; sends after the plan's end go
// into bins of the plan's average width, planned 0. So a schedule kept to within a bin draws the
// planned rate exactly, in every bin, the last included. Empty for no schedule to keep.
std::vector<RateBin> offered_rate(std::span<const SentRequest> sent,
                                  const engine::Schedule& schedule);

}  // namespace rlcheck::checks
