#pragma once
// How a finished gRPC call reads as the limiter's decision: denied when it ended with the
// denied status (--denied-code, RESOURCE_EXHAUSTED) or when an OK response matches a
// --denied-when field; allowed when OK otherwise; any other status an error. The retry hint
// comes from a google.rpc.RetryInfo detail, a `retry-after` metadata entry, or --hint-field.
// Pure: the client hands in what the call carried.

#include <optional>
#include <string>
#include <vector>

#include "engine/request_record.hpp"
#include "targets/grpc/field_path.hpp"

namespace google::protobuf {
class Message;
}

namespace rlcheck::grpc_target {

struct DecisionRules {
  int denied_code = 8;                  // RESOURCE_EXHAUSTED
  std::vector<FieldMatch> denied_when;  // any matching: denied
  std::optional<FieldPath> hint_field;  // in OK responses
  bool require_hint = true;             // a denial must carry a hint
};

// What a finished call carried.
struct CallEnd {
  int code = 0;         // the status code
  std::string message;  // the status message
  std::string details;  // grpc-status-details-bin: a serialized google.rpc.Status; may be empty
  // The first `retry-after` metadata entry (trailing, else initial), if any.
  std::optional<std::string> retry_after;
  // The response, parsed, when the call was OK and its bytes parsed; null otherwise.
  const google::protobuf::Message* response = nullptr;
  // The call was OK but its response did not parse as the method's output type.
  bool response_unreadable = false;
};

// `now_unix_s`: the clock a retry-after HTTP-date is read against.
engine::Decision decide_call(const CallEnd& end, const DecisionRules& rules, int64_t now_unix_s);

// Which error kind a status other than OK and the denied one is: DEADLINE_EXCEEDED a timeout,
// UNAVAILABLE a connection lost (the call may have reached the service), any other a server
// error (named in the message with its code).
engine::ErrorKind error_kind_of_status(int code);

}  // namespace rlcheck::grpc_target
