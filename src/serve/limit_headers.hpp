#pragma once
// The response a rate-limited endpoint should give, as `rlcheck serve` gives it: status,
// Retry-After, the IETF RateLimit and RateLimit-Policy fields and the X-RateLimit-* trio.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::serve {

// RateLimit-Policy: q per w seconds (and X-RateLimit-Limit: q).
struct Policy {
  int64_t limit = 10;
  int64_t window_s = 60;
};

// What a strategy keeps, as a policy. Windows (sliding, fixed, first-hit, and naive's intent):
// the limit per the window, in whole seconds rounded up. Buckets (token-bucket, gcra): q is the
// burst and w the time the refill takes to fill it from empty, so q / w is the refill (5/s
// with a burst of 5: q=5;w=1), rounded to the nearest whole second (at least 1): exact when the
// burst refills in whole seconds. A queue (leaky-queue, `burst` its depth B) as a bucket of
// B + 1: what arrivals see.
Policy policy_of(config::Strategy strategy, int64_t limit, int64_t window_ms, int64_t burst,
                 const config::Rate& refill);

struct LimitResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // JSON
};

// For an allowed or denied decision. Retry-After is whole seconds, rounded up (RFC 9110
// delay-seconds has no fraction), and so is the RateLimit reset.
LimitResponse limit_response(const engine::Decision& decision, const Policy& policy);

// When Redis could not decide: 503 (fail-closed), or 200 marked as unchecked (fail-open).
LimitResponse outage_response(bool fail_open);

}  // namespace rlcheck::serve
