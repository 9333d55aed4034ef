#pragma once
// What one HTTP response says about the limiter: allowed, denied or an error, with its retry
// hint and the rate-limit headers it advertised. Pure: unit-tested without a server.

#include <cstdint>
#include <string>

#include "engine/request_clock.hpp"
#include "engine/request_record.hpp"
#include "http/ratelimit_headers.hpp"
#include "http/response_rules.hpp"

namespace rlcheck::http {

// The local wall clock in whole seconds.
int64_t unix_now_s();

// `local_unix_s` is the local clock (unix_now_s), used when the response has no valid Date header.
// With `told_instant` it is the instant the request told the server (--virtual-clock), which
// epoch resets count from whatever the Date header (the server's real clock) says.
engine::Decision decide_response(int status, const HeaderList& headers, const ResponseRules& rules,
                                 int64_t local_unix_s, bool told_instant = false);

// The local clock decide_response reads for a request sent with `clock`: its virtual instant
// (with its skew) when it had one, else the wall clock.
int64_t response_clock_s(const engine::RequestClock& clock);

// decide_response for the response to a request sent with `clock`: on its virtual instant, which
// no Date header overrides, when it had one; else on the wall clock.
engine::Decision decide_response(int status, const HeaderList& headers, const ResponseRules& rules,
                                 const engine::RequestClock& clock);

}  // namespace rlcheck::http
