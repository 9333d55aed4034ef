#pragma once
// The rate-limit fields of an HTTP response, in the four spellings servers use: the de facto
// X-RateLimit-*, the IETF drafts' RateLimit-Limit/-Remaining/-Reset ("draft-6"), the single
// RateLimit dictionary ("draft-7"), and the structured-field RateLimit/RateLimit-Policy pair of
// draft-ietf-httpapi-ratelimit-headers-08 and later ("ietf"). Pure parsing: the caller supplies
// "now". Nothing here fails: what cannot be read becomes a line in `problems`.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rlcheck::http {

struct RateLimitPolicy {
  std::string name;                 // IETF structured form's policy name; empty otherwise
  std::optional<int64_t> quota;     // q= (or the draft-6/7 policy's first number)
  std::optional<int64_t> window_s;  // w=
};

struct RateLimitInfo {
  std::optional<int64_t> limit;  // advertised limit of the policy in force
  std::optional<int64_t> remaining;
  std::optional<int64_t> reset_s;   // seconds until reset (draft "reset", IETF "t",
                                    // X-RateLimit-Reset converted to a delta)
  std::optional<int64_t> window_s;  // from a policy's w=, when given
  // reset_s came from an X-RateLimit-Reset timestamp read against `reference_unix_s`: both
  // whole seconds, so the delay is known to a second either way.
  bool reset_from_timestamp = false;
  std::string source;  // "x-ratelimit", "draft-6", "draft-7", "ietf" (the one used; "" when none)
  std::vector<RateLimitPolicy> policies;
  std::vector<std::string> problems;  // malformed or conflicting fields, one line each, e.g.
                                      // "X-RateLimit-Remaining: not a number 'ten'"; never fatal
  bool any() const;                   // some field was understood
};

// (name, value) as received: any case, duplicates possible, values untrimmed.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Reads every rate-limit field in `headers`.
//  - X-RateLimit-Limit/-Remaining/-Reset: integers. A Reset above 10^9 is a Unix timestamp,
//    turned into a delta from `reference_unix_s` (the Date header or the local clock), floored
//    at 0; one beyond 10^11 (year 5138) is reported, as it is most likely in milliseconds.
//  - draft-6: RateLimit-Limit (an integer, optionally followed by quota policies:
//    "10, 10;w=60"), RateLimit-Remaining, RateLimit-Reset (delta seconds).
//  - draft-7: "RateLimit: limit=10, remaining=9, reset=50".
//  - ietf: "RateLimit: \"default\";r=9;t=50" with
//    "RateLimit-Policy: \"default\";q=10;w=60, \"burst\";q=100;w=1".
//  RateLimit-Policy members that are bare integers ("10;w=60") are draft-6/7 policies; they
//  belong to draft-7 when the RateLimit field is a draft-7 dictionary, else to draft-6.
//
// The policy in force: for ietf, the RateLimit member with the fewest remaining (it is the one
// that will refuse first; the first member on a tie), whose limit and window are the q and w of
// the RateLimit-Policy member of the same name (else of the first policy). For draft-6/7, the
// window is that of the policy whose quota equals the limit (else of the first policy), and a
// missing limit is taken from the first policy's quota.
//
// Precedence: `source` is the best form that yielded any value (ietf > draft-7 > draft-6 >
// x-ratelimit); each of limit, remaining, reset and window comes from the best form that has it.
// Any other form that gives a different value is reported (resets within 1 s agree: a delay
// rounds either way; within 2 s when one was a timestamp, read against a Date truncated to the
// second), as is remaining above limit.
//
// Field values: names match case-insensitively; values are trimmed; a value repeated verbatim
// is ignored; a single-valued field repeated with a different value is reported and the first
// kept; RateLimit-Policy, and the ietf RateLimit, are lists, so repeated fields add members.
// Negative numbers, fractions, values above 10^15 (RFC 8941's integer limit), empty values and
// garbage are reported and leave that item unset. A delta-seconds reset above 10^9 looks like a
// Unix timestamp sent where a delta belongs: it is reported and left unset.
RateLimitInfo parse_ratelimit_headers(const HeaderList& headers, int64_t reference_unix_s);

}  // namespace rlcheck::http
