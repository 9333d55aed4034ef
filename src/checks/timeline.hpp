#pragma once
// A run binned over time for the HTML report: per identity, what was allowed, denied and
// errored in each slice, and how many admissions the last window held at each slice's end.

#include <cstdint>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"
#include "checks/offered_rate.hpp"
#include "engine/schedule.hpp"

namespace rlcheck::checks {

struct TimelineSeries {
  uint32_t identity = 0;
  std::vector<uint32_t> allowed;    // per bin, by send instant
  std::vector<uint32_t> denied;     // per bin, by send instant
  std::vector<uint32_t> errors;     // per bin, by send instant
  std::vector<uint32_t> in_window;  // at each bin's end: admissions replied within one window
};

struct Timeline {
  int64_t duration_ns = 0;   // the run, start line to last reply
  int64_t bin_ns = 1;        // width of one bin
  int64_t identities = 1;    // identities in the run; series shows at most k_timeline_series
  double contract_line = 0;  // what one window may hold: the limit, or burst + refill x window
  std::vector<TimelineSeries> series;  // the worst identity first, then by identity
  // The open model: requests sent per second over every identity, and the rate the schedule
  // planned, in bins of their own (checks/offered_rate; empty for the closed model).
  std::vector<RateBin> rate;
};

inline constexpr int k_timeline_bins = 400;
inline constexpr size_t k_timeline_series = 4;

Timeline build_timeline(const IdentityRecords& identities, const AdmissionRule& rule,
                        int64_t duration_ns, uint32_t worst_identity);

// Fills timeline.rate from every identity's sends against `schedule` (the open model only;
// nothing otherwise).
void add_offered_rate(Timeline& timeline, const IdentityRecords& identities,
                      const engine::Schedule& schedule);

}  // namespace rlcheck::checks
