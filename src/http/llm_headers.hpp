#pragma once
// The rate-limit headers of LLM gateways (OpenAI's spelling, which others copy): a requests
// pair and a tokens pair, each with its limit, what remains and when it resets, the reset a
// Go-style duration ("6m0s", "1.5s", "20ms"):
//   x-ratelimit-limit-requests: 60       x-ratelimit-limit-tokens: 150000
//   x-ratelimit-remaining-requests: 59   x-ratelimit-remaining-tokens: 149984
//   x-ratelimit-reset-requests: 1s       x-ratelimit-reset-tokens: 6m0s
// Pure parsing; what cannot be read becomes a line in `problems`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/ratelimit_headers.hpp"

namespace rlcheck::http {

struct LlmPair {
  std::optional<int64_t> limit;
  std::optional<int64_t> remaining;
  std::optional<int64_t> reset_ms;
};

struct LlmLimits {
  LlmPair requests;
  LlmPair tokens;
  std::vector<std::string> problems;
  bool any() const {
    return requests.limit || requests.remaining || tokens.limit || tokens.remaining;
  }
};

// "6m0s", "1.5s", "20ms", "1h2m3.5s", "0s": milliseconds, rounded up; nullopt when malformed.
std::optional<int64_t> parse_go_duration_ms(std::string_view text);

LlmLimits parse_llm_headers(const HeaderList& headers);

// --ratelimit-headers: which spellings are read. auto: all; ietf: the RateLimit fields of the
// IETF drafts; x: X-RateLimit-Limit/-Remaining/-Reset; llm: the requests and tokens pairs.
enum class HeaderForms { automatic, ietf, x, llm };

// The headers of `forms` only (every header but the rate-limit ones of other forms).
HeaderList headers_of_forms(const HeaderList& headers, HeaderForms forms);

}  // namespace rlcheck::http
