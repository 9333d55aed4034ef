#pragma once
// A run binned over time for the HTML report: per identity, what was allowed, denied and
// errored in each slice, and how many admissions the last window held at each slice's end.
// Under --cost every figure counts units (each request its cost), as the audits do.

#include <cstdint>
#include <string>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/ban_audit.hpp"
#include "checks/composite_audit.hpp"
#include "checks/contract_audit.hpp"
#include "checks/offered_rate.hpp"
#include "checks/queue_audit.hpp"
#include "checks/slow_down_audit.hpp"
#include "engine/schedule.hpp"

namespace rlcheck::checks {

// Each count is of requests, or of their units when the timeline is in_units.
struct TimelineSeries {
  uint32_t identity = 0;
  std::vector<uint32_t> allowed;    // per bin, by send instant
  std::vector<uint32_t> denied;     // per bin, by send instant
  std::vector<uint32_t> errors;     // per bin, by send instant
  std::vector<uint32_t> in_window;  // at each bin's end: admissions replied within one window
  // --contract concurrency (add_in_flight): the most admissions in flight at one instant of
  // each bin, surely (their sure spans, by the hold floor) and possibly (send to reply; an
  // unknown request from its send on). Empty otherwise.
  std::vector<uint32_t> in_flight_surely;
  std::vector<uint32_t> in_flight_possibly;
  // --contract ban (add_ban_spans): the bans surely in force, [from, to) from the run start.
  std::vector<std::pair<int64_t, int64_t>> ban_spans;
  // --contract queue (add_queue_waits): per bin, the longest wait beyond the unloaded latency of
  // the admissions sent in it (-1: none was); --contract slow-down (add_slow_down_waits): of the
  // admissions the delay check judged. Empty otherwise.
  std::vector<int64_t> wait_most_ns;
  // --contract slow-down: per bin, the most delay a request's place allowed (-1: none), and that
  // plus the delay check's tolerance; a wait past the latter is a request the check fails.
  // Empty otherwise (a queue's promise is the same for all: Timeline::promised_wait_ns).
  std::vector<int64_t> wait_promised_ns;
  std::vector<int64_t> wait_allowed_ns;
};

// Several contracts: whether a part's limit can be drawn against `in_window` (one identity's
// admissions in the timeline's window), and why not when it cannot.
enum class PartLineFit {
  drawn,
  other_window,    // a window of its own: its limit says nothing of another window's count
  per_group,       // counted over a group of identities; the series are one identity's
  counts_requests  // counts requests while the series count units (--cost)
};

struct TimelinePart {
  std::string spec;       // as given: "sliding:5/1s"
  int64_t window_ns = 0;  // the part's own window
  PartLineFit fit = PartLineFit::drawn;
  double line = 0;  // drawn: what one of the timeline's windows may hold under the part
};

struct Timeline {
  int64_t duration_ns = 0;   // the run, start line to last reply
  int64_t bin_ns = 1;        // width of one bin
  int64_t identities = 1;    // identities in the run; series shows at most k_timeline_series
  double contract_line = 0;  // what one window may hold: the limit, or burst + refill x window
  int64_t window_ns = 0;     // the trailing window in_window counts over (the rule's)
  bool in_units = false;     // --cost: the series count units, not requests
  bool in_flight = false;    // --contract concurrency: contract_line is the cap, drawn over
                             // in_flight_* instead of in_window
  // --contract queue: the wait promised (B / R) and the tolerance the delay check allows past
  // it, for the chart of each series' wait_most_ns.
  int64_t promised_wait_ns = 0;
  int64_t wait_tolerance_ns = 0;
  // Several contracts: every part, in the order given (empty for one contract).
  std::vector<TimelinePart> parts;
  std::vector<TimelineSeries> series;  // the worst identity first, then by identity
  // The open model: requests sent per second over every identity, and the rate the schedule
  // planned, in bins of their own (checks/offered_rate; empty for the closed model).
  std::vector<RateBin> rate;
};

inline constexpr int k_timeline_bins = 400;
inline constexpr size_t k_timeline_series = 4;

// `in_units`: count each request's cost (--cost), not the request.
Timeline build_timeline(const IdentityRecords& identities, const AdmissionRule& rule,
                        int64_t duration_ns, uint32_t worst_identity, bool in_units = false);

// Fills timeline.parts from several contracts' parts: a part's limit is drawn only where it
// bounds what in_window counts. A sliding, fixed or sliding-counter part's limit holds for its
// own window, so it is drawn only when that is the timeline's window; a bucket allows
// burst + refill x d in any span d, so it is drawn at that for the timeline's window. Group
// parts and, under costs, parts counting requests are never drawn.
void add_timeline_parts(Timeline& timeline, const std::vector<ContractPart>& parts);

// --contract concurrency: fills each series' in_flight_* (admissions read as the audit reads
// them, checks/concurrency_audit: sure spans [reply - hold, send + hold), possible spans
// [send, reply + slack), an unknown request's from its send on; `hold_ns` 0: no sure span) and
// sets the contract line to `cap`.
void add_in_flight(Timeline& timeline, const IdentityRecords& identities, int64_t cap,
                   int64_t hold_ns, int64_t slack_ns);

// --contract queue: each shown identity's longest wait per bin beyond `queue.unloaded_ns`, and
// the promise it is held to (checks/queue_audit).
void add_queue_waits(Timeline& timeline, const IdentityRecords& identities,
                     const QueueAudit& queue);

// --contract slow-down: each shown identity's longest delay per bin beyond the unloaded latency
// of the requests `delay` judged, and the promise a bin's wait is held to: of the request it
// holds that the check fails, if any, else of its longest wait (`promises`: audit_slow_down's).
void add_slow_down_waits(Timeline& timeline, const IdentityRecords& identities,
                         const SlowDownAudit& slow_down, const SlowDownPromises& promises);

// --contract ban: each shown identity's sure ban spans (checks/ban_audit).
void add_ban_spans(Timeline& timeline, const std::vector<BanSpan>& spans);

// Fills timeline.rate from every identity's sends against `schedule` (the open model only;
// nothing otherwise).
void add_offered_rate(Timeline& timeline, const IdentityRecords& identities,
                      const engine::Schedule& schedule);

}  // namespace rlcheck::checks
