#pragma once
// How true the retry hints were: for every denial that carried one, the wait the contract and
// the admissions seen so far predict, against the wait the limiter told.
//
// The prediction is a range, never a point: an admission happened somewhere between its send
// and its reply, and so did the denial. The admissions surely before the denial (replied before
// it was sent) give the shortest wait, the ones possibly before it (sent before its reply) the
// longest; a hint inside the range has no error, one outside it is early or late by its
// distance to the range.

#include <cstdint>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

struct HintError {
  uint32_t identity = 0;
  uint64_t seq = 0;
  int64_t denied_at_ns = 0;  // the denial's reply, from the run start
  int64_t hint_ms = 0;       // what the limiter said
  int64_t error_ms = 0;      // hint minus the nearest predicted wait: < 0 early, > 0 late
};

struct RetryAccuracy {
  std::vector<HintError> errors;  // one per denial with a usable hint, by identity then seq
  int64_t early = 0;              // hints early by more than the early tolerance
  int64_t late = 0;               // hints late by more than the late tolerance
  // Denials the admissions seen cannot explain (the window held fewer than the limit, the
  // bucket had a token): the limiter counted something else (state from before the run,
  // other clients), so no wait can be predicted and the hint is not judged.
  int64_t unexplained = 0;
  bool any() const { return !errors.empty(); }
};

struct AccuracyTolerance {
  int64_t early_ms = 1000;  // a client that obeys it is denied again
  int64_t late_ms = 1000;   // max(1 s, 10 % of the window): clients wait for nothing
};

// The hint of a denial in milliseconds: the limiter's retry_ms (Retry-After), else an
// advertised reset (RateLimit t); none when the denial carried neither or a malformed one.
std::optional<int64_t> usable_hint_ms(const engine::RequestRecord& record);

// Fixed windows must already carry their index (assign_wall_windows); `start_wall_ns` places
// the run on the wall clock, where fixed windows end.
RetryAccuracy measure_retry_accuracy(const IdentityRecords& identities, const AdmissionRule& rule,
                                     int64_t start_wall_ns, const AccuracyTolerance& tolerance);

}  // namespace rlcheck::checks
