#pragma once
// What one HTTP response says about the limiter: allowed, denied or an error, with its retry
// hint and the rate-limit headers it advertised. Pure: unit-tested without a server.

#include <cstdint>
#include <string>

#include "engine/request_record.hpp"
#include "http/ratelimit_headers.hpp"
#include "http/response_rules.hpp"

namespace rlcheck::http {

// The local wall clock in whole seconds.
int64_t unix_now_s();

// `local_unix_s` is the local clock (unix_now_s), used when the response has no valid Date header.
engine::Decision decide_response(int status, const HeaderList& headers, const ResponseRules& rules,
                                 int64_t local_unix_s);

}  // namespace rlcheck::http
