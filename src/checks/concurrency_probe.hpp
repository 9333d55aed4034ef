#pragma once
// A concurrency cap seen from outside, the pure half of the probe's concurrency test
// (app/probe_concurrency): requests one at a time are all admitted, a batch sent at once is
// partly denied while its admitted requests are still in progress, and once their replies came
// a second batch is admitted as many again. A rate limiter that admitted the first batch has
// no room for the second one so soon (unless its window is shorter than one reply).

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "checks/contract_inference.hpp"

namespace rlcheck::checks {

// A batch sent at once: how many were admitted, and of those how many were still unanswered
// when a denial of the batch was answered (held while another was refused).
struct AtOnceBatch {
  int64_t sent = 0;
  int64_t admitted = 0;
  int64_t denied = 0;
  int64_t held_past_a_denial = 0;
};
AtOnceBatch read_at_once(std::span<const ProbeRequest> batch);

// Whether two batches sent at once (the second once every reply of the first came) read as a
// cap on requests in progress: both partly denied, every admission of each held past a denial,
// and the second admitting at least all but one of what the first did (a limiter that counts
// requests has no room for it so soon). The cap is the most either admitted; unset otherwise,
// and `why_not` says what did not fit.
std::optional<int64_t> cap_from_batches(const AtOnceBatch& first, const AtOnceBatch& second,
                                        std::string& why_not);

// The service-time floor seen: the fastest admitted reply (ns); 0 with none admitted.
int64_t fastest_admission_ns(std::span<const ProbeRequest> requests);

}  // namespace rlcheck::checks
