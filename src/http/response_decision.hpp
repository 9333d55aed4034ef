#pragma once
// What one HTTP response says about the limiter: allowed, denied or an error, with its retry
// hint and the rate-limit headers it advertised. Pure: unit-tested without a server.

#include <cstdint>
#include <string>

#include <curl/curl.h>

#include "engine/request_record.hpp"
#include "http/ratelimit_headers.hpp"
#include "http/status_set.hpp"

namespace rlcheck::http {

struct ResponseRules {
  StatusSet allowed;                // --allowed-status (200-299)
  StatusSet denied;                 // --denied-status (429)
  bool require_retry_after = true;  // a denial must carry Retry-After
};

// The local wall clock in whole seconds.
int64_t unix_now_s();

// `local_unix_s` is the local clock (unix_now_s), used when the response has no valid Date header.
engine::Decision decide_response(int status, const HeaderList& headers, const ResponseRules& rules,
                                 int64_t local_unix_s);

// A transfer that ended without a response: its error kind and message.
engine::Decision decide_transport_failure(CURLcode code, const std::string& detail);

}  // namespace rlcheck::http
