#pragma once
// key-ttl: every limiter key must expire, and no later than the contract can need it. A key
// with no TTL never expires (a client over the limit is locked out for good); a key whose TTL
// outlives the window (EXPIRE given milliseconds, a TTL in the wrong unit) locks it out long
// after the window has passed, though it expires some day.

#include <cstdint>
#include <string>
#include <vector>

#include "checks/checks.hpp"

namespace rlcheck::checks {

// The most a key may live beyond what the contract needs: max(1 s, 10 % of it), for the
// limiter's own rounding (a TTL set in whole seconds, a window rounded up).
int64_t key_ttl_tolerance_ms(int64_t needed_ms);

// "16h 40m", "2s", "1.5s", "250ms": a TTL as a person reads it.
std::string ttl_text(int64_t ms);

CheckResult check_key_ttl(const std::vector<RunStats>& runs, const CheckParams& params);

}  // namespace rlcheck::checks
