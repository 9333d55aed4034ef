#pragma once
// The units a response says are left (an LLM gateway's x-ratelimit-remaining-tokens) against
// the admissions seen: after an admission of cost c under a limit of L units per window, L - c
// less the units of the admissions in its window. Which admissions were in its window is known
// only to a range (each happened between its send and its reply), so the count is judged
// against a range: below it the limiter counted units nobody was admitted for, above it it
// promises units it has given away (a remaining count of requests where tokens were asked).

#include <cstdint>
#include <optional>
#include <string>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

struct RemainingMismatch {
  uint32_t identity = 0;
  uint64_t seq = 0;
  int64_t said = 0;  // the units the response said were left
  int64_t low = 0;   // what the admissions seen allow, from low...
  int64_t high = 0;  // ...to high
};

struct RemainingUnits {
  std::string part;    // the contract judged against ("sliding:40/2s"); empty: not judged
  int64_t judged = 0;  // admissions whose reply said the units left
  int64_t wrong = 0;   // of those, a count outside what the admissions seen allow
  std::optional<RemainingMismatch> first;  // the earliest sent of those
};

// `rule`: a sliding window counting units (records carry their costs, one record a request).
void judge_remaining_units(RemainingUnits& found, const IdentityRecords& identities,
                           const AdmissionRule& rule);

}  // namespace rlcheck::checks
