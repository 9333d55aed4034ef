#pragma once
// The retry hint of a failed call, from where gRPC services put it: a google.rpc.RetryInfo in
// the status details (the grpc-status-details-bin trailer: a serialized google.rpc.Status whose
// details are Any messages), as AIP-194 and go-grpc-middleware-based limiters send it. Parsed
// from the wire format by hand: Debian ships no google/rpc headers.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace rlcheck::grpc_target {

struct RetryDelay {
  int64_t ms = 0;              // the delay, rounded up to the millisecond (negative: 0)
  bool whole_seconds = false;  // the Duration had no nanos: it may count whole seconds only
};

// The retry_delay of the first google.rpc.RetryInfo among the details of `status_bytes` (a
// serialized google.rpc.Status); nullopt when there is none (or it has no delay); an error
// saying what is malformed when the bytes do not parse.
std::expected<std::optional<RetryDelay>, std::string> retry_delay_of_status(
    std::string_view status_bytes);

}  // namespace rlcheck::grpc_target
