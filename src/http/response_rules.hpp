#pragma once
// Which HTTP statuses mean allowed and denied, and whether a denial must say when to retry:
// what --allowed-status, --denied-status and --no-require-retry-after set.

#include "http/llm_headers.hpp"
#include "http/status_set.hpp"

namespace rlcheck::http {

struct ResponseRules {
  StatusSet allowed;                                  // --allowed-status (200-299)
  StatusSet denied;                                   // --denied-status (429)
  bool require_retry_after = true;                    // a denial must carry Retry-After
  HeaderForms header_forms = HeaderForms::automatic;  // --ratelimit-headers
};

}  // namespace rlcheck::http
