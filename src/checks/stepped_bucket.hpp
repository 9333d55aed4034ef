#pragma once
// A token bucket that refills in steps (--refill K/I,steps): K tokens at each tick, I apart,
// none between. Where the ticks fall is not known to rlcheck without --anchor (on the
// limiter's clock, or counted from the bucket's creation before the run: Symfony's quanta), so
// a fail must hold under every placement of them. In any span of length d, whatever the
// placement, the ticks bring at most K x (floor(d / I) + 1) <= K + d x K / I tokens and at
// least K x floor(d / I) >= d x K / I - K. So the stepped bucket admits no more than a smooth
// bucket of burst B + K and holds no fewer tokens than one of burst B - K, both refilling K / I
// smoothly: each audit reads the bracket that favours the limiter, and the smooth audits do the
// rest.
//
// With --anchor the ticks fall at phase + k x I, the phase known within an interval (the
// limiter's clock within its resolution; the bucket's creation between its first admission's
// send and reply): a span then gets at most the ticks the earliest phase puts before its end
// less those the latest phase puts before its start, at most K x (ticks + 1) when the phase's
// interval is shorter than I, and exactly the ticks when it is a point.

#include <cstdint>
#include <optional>

#include "checks/admission_peak.hpp"

namespace rlcheck::checks {

// The most a stepped bucket may admit: smooth, burst B + K. A smooth rule is returned as is.
AdmissionRule most_admitting(const AdmissionRule& rule);

// The fewest tokens a stepped bucket surely holds: smooth, burst B - K (0 when K >= B: then
// no denial proves it had room). A smooth rule is returned as is.
AdmissionRule least_holding(const AdmissionRule& rule);

// Ticks at phase + k x step_ns for every integer k (k >= 1 when `from_creation`: the phase is
// the bucket's creation, which brings a full bucket, not a tick), the phase (from the run
// start) somewhere in [earliest_ns, latest_ns].
struct TickPhase {
  int64_t earliest_ns = 0;
  int64_t latest_ns = 0;
  int64_t step_ns = 1;
  bool from_creation = false;
  // The ticks at or before `at_ns`, counted from one origin: with the phase at its earliest
  // (the most) and at its latest (the fewest). The most ticks any phase allowed places in
  // (from, to] is most_up_to(to) - fewest_up_to(from).
  int64_t most_up_to(int64_t at_ns) const;
  int64_t fewest_up_to(int64_t at_ns) const;
};

// Where --anchor places one identity's ticks: clock, by the run start on the wall clock
// (rule.start_wall_ns); first-hit, by the first request's send and the first admission's
// reply, when the run surely created the bucket (rule.fresh_state) and no pause between
// admissions was long enough for a store to drop a full bucket and create it anew (Symfony
// keeps a bucket ceil(B / K) intervals after its last admission; a second more, or an
// interval, is allowed for its rounding). nullopt: the ticks may fall anywhere.
std::optional<TickPhase> tick_phase(engine::RecordView records, const AdmissionRule& rule);

}  // namespace rlcheck::checks
