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

// At most this many bins cover the plan (more when sends ran late past its end).
inline constexpr uint64_t k_rate_bins = 50;

// Bins `sent_ns` (the send instants of every request sent, from the start line, in any
// order) against `schedule`, an open model's. Uniform arrivals: each bin stands for a whole
// number of planned requests, from the instant the first is due to the instant the next bin's
// first is, and counts the sends nearer its requests' due instants than the neighbours' (half
// a gap's tolerance either side, so a send a little late or early stays in its bin); its rate
// is what it counted over the time its planned requests take. A schedule kept to the
// nanosecond or within half a gap draws the planned rate exactly, in every bin, the last
// included. Poisson arrivals: bins of equal width from the start line (the arrivals are
// random; a count per bin is the honest view). Sends after the plan's last bin go into bins
// of the plan's average width, planned 0. Empty for no schedule to keep.
std::vector<RateBin> offered_rate(std::span<const int64_t> sent_ns,
                                  const engine::Schedule& schedule);

}  // namespace rlcheck::checks
