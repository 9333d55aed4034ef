#pragma once
// What one request did: when it left and came back, and what the limiter decided.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlcheck::engine {

enum class Outcome : uint8_t { allowed, denied, error };

// Why a request errored. Names (error_kind_name) appear in reports as "error_kinds" keys.
enum class ErrorKind : uint8_t {
  none,
  timeout,          // no final reply within --timeout
  connection,       // the connection could not be made (or made ready) for the request
  connection_lost,  // the connection closed or reset with the request in flight
  crossslot,        // Redis Cluster: the command's keys (or a script's) span hash slots
  not_sent,         // no live connection was left to send it on
  server_error,     // the server replied with an error (script runtime error, WRONGTYPE...)
  bad_reply,        // a reply the limiter contract does not allow (a string from a script...)
  refused,          // http: the connection was refused
  resolve,          // http: the host name did not resolve
  reset,            // http: the connection closed or reset before a whole response
  tls,              // http: TLS handshake or certificate failure
  status,           // http: a status neither allowed nor denied (reported as status-NNN)
  transport,        // http: any other transport failure
  protocol,         // the reply broke the protocol: not HTTP, invalid RESP, a reply to no command
  too_large,        // a reply over what rlcheck keeps of one (docs/production-redis.md)
};

const char* error_kind_name(ErrorKind kind);

// Whether a request that errored this way may have reached the limiter and changed it: a
// timeout, a connection lost or reset after sending, a reply that was an error or could not be
// read. Its decision is unknown, possibly an admission (`unknown` in reports). False for a
// request that never left (no connection, refused, unresolved, TLS failed, not sent) or that
// Redis Cluster refuses before running it (crossslot).
bool may_have_reached_limiter(ErrorKind kind);

// The decision a target reports for one request; the engine adds the instants.
struct Decision {
  Outcome outcome = Outcome::error;
  ErrorKind error = ErrorKind::none;
  std::string error_message;         // first words of the reply, for the report
  std::optional<int64_t> retry_ms;   // the retry hint, when the reply carried one
  std::optional<int64_t> remaining;  // the remaining count, when the reply carried one
  // The units left (an LLM gateway's x-ratelimit-remaining-tokens), when the reply said.
  std::optional<int64_t> remaining_units;
  bool hint_expected = false;  // the reply shape has a place for a retry hint
  int64_t bucket = 0;          // fixed windows: the window index; else 0
  // leaky-queue (serve): how long the caller holds an admitted request before it leaves.
  int64_t hold_ms = 0;
  uint16_t status = 0;                         // http: the response status
  bool hint_invalid = false;                   // a hint was given but is malformed ("1.5")
  std::string hint_note;                       // what was malformed in the hint, for the report
  std::optional<int64_t> advertised_limit;     // http: the limit the response advertised
  std::optional<int64_t> advertised_reset_s;   // http: its reset / t, in seconds
  std::optional<int64_t> advertised_window_s;  // http: its policy's window (w=), in seconds
  // http: every policy the response advertised (quota, window in seconds), when it advertised
  // several (RateLimit-Policy: "burst";q=100;w=60, "daily";q=1000;w=86400); else empty.
  std::vector<std::pair<int64_t, int64_t>> policies;
  bool header_problem = false;  // http: a rate-limit header was malformed
  std::string header_note;      // what was malformed in it
  // The unit the retry hint counts in, which bounds how exactly it can be judged: 1 (a
  // script's retry_ms), 1000 (whole seconds: HTTP Retry-After, RateLimit reset / t).
  int32_t hint_resolution_ms = 1;
  // http: the reset (an epoch X-RateLimit-Reset) or the Retry-After (an HTTP-date) was a
  // timestamp, turned into a delay against the Date header (else the local clock): both count
  // whole seconds, so the delay is known to a second either way.
  bool reset_from_date = false;
  bool retry_from_date = false;
  // Redis Cluster: the master that decided ("host:port"); empty otherwise. Valid until the
  // decision is handed over; the worker counts requests per node (RunResult::by_node).
  std::string_view node;
  // When the reply was read off the socket (its last bytes); unset (the epoch): when reported.
  // Replies read together share one clock reading, taken after the read.
  std::chrono::steady_clock::time_point received{};
};

struct RequestRecord {
  uint64_t seq = 0;        // 0-based request number within the run
  uint32_t identity = 0;   // whose limit the request counts against (engine/identity_map)
  int64_t sent_ns = 0;     // steady clock, from the run start
  int64_t replied_ns = 0;  // steady clock, from the run start
  Outcome outcome = Outcome::error;
  ErrorKind error = ErrorKind::none;
  bool hint_expected = false;
  std::optional<int64_t> retry_ms;
  std::optional<int64_t> remaining;
  int64_t bucket = 0;
  uint16_t status = 0;
  bool hint_invalid = false;
  bool header_problem = false;
  int32_t hint_resolution_ms = 1;  // Decision::hint_resolution_ms (in the padding: no growth)
  bool reset_from_date = false;    // Decision::reset_from_date
  bool retry_from_date = false;    // Decision::retry_from_date
  uint8_t clock_skew = 0;          // index into LoadConfig::clock_skews of the sender's clock
  // The units the request asks for (--cost, --cost-dist): what every contract counts; 1 each
  // without costs.
  int32_t cost = 1;
  std::optional<int64_t> advertised_limit;
  std::optional<int64_t> advertised_reset_s;
  std::optional<int64_t> advertised_window_s;
  std::optional<int64_t> remaining_units;  // Decision::remaining_units (kept whole when set)
};

// An error that says the request never reached a connection: none could be made.
inline bool never_connected(ErrorKind kind) {
  return kind == ErrorKind::connection || kind == ErrorKind::refused ||
         kind == ErrorKind::resolve || kind == ErrorKind::tls || kind == ErrorKind::not_sent;
}

// An errored request that may have been admitted (may_have_reached_limiter): audits that judge
// the limiter's denials count it as possibly admitted, over-admission checks as not admitted.
inline bool is_unknown(const RequestRecord& record) {
  return record.outcome == Outcome::error && may_have_reached_limiter(record.error);
}

}  // namespace rlcheck::engine
