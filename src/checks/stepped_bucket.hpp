#pragma once
// A token bucket that refills in steps (--refill K/I,steps): K tokens at each tick, I apart,
// none between. Where the ticks fall is not known to rlcheck (on the limiter's clock, or
// counted from the bucket's creation before the run: Symfony's quanta), so a fail must hold
// under every placement of them. In any span of length d, whatever the placement, the ticks
// bring at most K x (floor(d / I) + 1) <= K + d x K / I tokens and at least K x floor(d / I)
// >= d x K / I - K. So the stepped bucket admits no more than a smooth bucket of burst B + K
// and holds no fewer tokens than one of burst B - K, both refilling K / I smoothly: each audit
// reads the bracket that favours the limiter, and the smooth audits do the rest.

#include "checks/admission_peak.hpp"

namespace rlcheck::checks {

// The most a stepped bucket may admit: smooth, burst B + K. A smooth rule is returned as is.
AdmissionRule most_admitting(const AdmissionRule& rule);

// The fewest tokens a stepped bucket surely holds: smooth, burst B - K (0 when K >= B: then
// no denial proves it had room). A smooth rule is returned as is.
AdmissionRule least_holding(const AdmissionRule& rule);

}  // namespace rlcheck::checks
