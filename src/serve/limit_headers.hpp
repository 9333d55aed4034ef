#pragma once
// The response a rate-limited endpoint should give, as `rlcheck serve` gives it: status,
// Retry-After, the IETF RateLimit and RateLimit-Policy fields and the X-RateLimit-* trio.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/request_record.hpp"

namespace rlcheck::serve {

struct Policy {
  int64_t limit = 10;
  int64_t window_s = 60;
};

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
