#pragma once
// The promise a limiter makes, audited over a whole run one identity at a time: the worst
// span against the contract, and how much of what the contract allows the limiter let through.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "checks/admission_peak.hpp"
#include "engine/record_log.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::checks {

// The records of one run, one view per identity (index = identity), each ordered by seq.
using RecordSpan = engine::RecordView;
using IdentityRecords = std::vector<RecordSpan>;
// Orders `records` by identity in place (by seq within one, as the engine delivers them) and
// returns a view of each identity's, so audits never copy a run's records.
IdentityRecords split_by_identity(engine::RecordLog& records, int64_t identities);
IdentityRecords split_by_identity(std::vector<engine::RequestRecord>& records, int64_t identities);

// The send instants of the requests in `records` that may have been admitted unseen
// (engine::is_unknown), sorted. Each may have been decided any time from its send on: a server
// can run a request after rlcheck stopped waiting for it (Redis runs the commands a stall held
// once it ends), so it may count against the limit at any later instant.
std::vector<int64_t> unknown_sends(RecordSpan records);

// The most admissions of one identity whose send..reply spans all overlap (all in flight at one
// instant): above the capacity, the signature of a burst admitted before any decision counted.
int64_t admitted_in_flight_at_once(const IdentityRecords& identities);

// How many of `sorted_sends` (unknown_sends) came before `at_ns`. Inline: most runs have none,
// and the audits ask once a denial.
inline int64_t sent_before(const std::vector<int64_t>& sorted_sends, int64_t at_ns) {
  if (sorted_sends.empty())
    return 0;
  return std::lower_bound(sorted_sends.begin(), sorted_sends.end(), at_ns) - sorted_sends.begin();
}

// The index of the fixed window (of `window_ns`, aligned to the epoch) holding the instant
// `at_ns` after a run started at `start_wall_ns` on the wall clock.
int64_t wall_window(int64_t start_wall_ns, int64_t at_ns, int64_t window_ns);

// Fixed windows turn on the wall clock. Admissions whose limiter named no window (bucket 0:
// HTTP, user scripts) get the window their send and reply instants both fall in, widened by
// the clock tolerance; one that may sit on either side of a boundary gets a window of its own,
// -(seq + 1), so it never counts against either neighbour. Denials keep bucket 0.
void assign_wall_windows(engine::RecordLog& records, int64_t start_wall_ns,
                         const AdmissionRule& rule);
// One record's part of it: false when the record is left as it is (not an admission, or its
// limiter named its window).
bool place_in_wall_window(engine::RequestRecord& record, int64_t start_wall_ns,
                          const AdmissionRule& rule);
void assign_wall_windows(std::vector<engine::RequestRecord>& records, int64_t start_wall_ns,
                         const AdmissionRule& rule);

struct ContractAudit {
  AdmissionPeak worst;           // the worst span of any identity
  uint32_t worst_identity = 0;   // whose it was (of equal excess, the lowest identity)
  AdmissionPeak boundary_burst;  // fixed: the worst sliding span, for information
  // sliding-counter: the most admissions surely within one true sliding window of W (up to
  // 2 L under that contract, when the previous window's came in its last W / L: not a
  // failure), for information; allowance = the limit.
  AdmissionPeak sliding_window;
  // --clock-skew: the admissions of the worst span (worst_identity's, sent and replied within
  // [worst.start_ns, worst.start_ns + worst.length_ns]) by the index of the clock that sent
  // them; empty without skews.
  std::vector<int64_t> worst_by_skew;
};

// The tally of ContractAudit::worst_by_skew, over `clock_skews` offsets.
std::vector<int64_t> tally_by_skew(RecordSpan records, const AdmissionPeak& span,
                                   size_t clock_skews);

// Fixed windows already assigned (assign_wall_windows).
ContractAudit audit_contract(const IdentityRecords& identities, const AdmissionRule& rule);

struct Utilisation {
  int64_t admitted = 0;  // admissions of the identity with the lowest share
  int64_t unknown = 0;   // of those, errored requests read as admitted (see below)
  int64_t allowed = 0;   // what the contract allows for its requests, first come first served
  uint32_t identity = 0;
  double ratio() const { return allowed == 0 ? 1.0 : static_cast<double>(admitted) / allowed; }
};

// The identity (of equal shares, the lowest) that got the smallest share of what the contract
// would have admitted of the requests it sent (replayed at their send instants; fixed windows
// of requests without a window index placed by `start_wall_ns`). Requests that may have been
// admitted unseen (engine::is_unknown) are read as never sent, or as sent and admitted,
// whichever reading gives the identity the larger share.
Utilisation measure_utilisation(const IdentityRecords& identities, const AdmissionRule& rule,
                                int64_t start_wall_ns);
// The same for one identity's records.
Utilisation identity_utilisation(RecordSpan records, uint32_t identity, const AdmissionRule& rule,
                                 int64_t start_wall_ns);

}  // namespace rlcheck::checks
