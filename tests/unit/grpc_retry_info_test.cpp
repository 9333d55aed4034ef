// The retry hint in a failed call's status details: google.rpc.RetryInfo inside the serialized
// google.rpc.Status of grpc-status-details-bin, encoded here by protobuf itself.

#include <doctest/doctest.h>

#include <string>

#include "shared/proto_types.hpp"
#include "targets/grpc/retry_info.hpp"

using rlcheck::grpc_target::retry_delay_of_status;
using rlcheck::testing::ProtoTypes;

namespace {

// google/rpc/status.proto and error_details.proto, as far as they matter here (field numbers
// as in googleapis), and google.protobuf.Any.
constexpr const char* k_rpc = R"(
syntax = "proto3";
package google.rpc;
import "google/protobuf/duration.proto";
message Any { string type_url = 1; bytes value = 2; }
message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
message RetryInfo { google.protobuf.Duration retry_delay = 1; }
message QuotaFailure { message Violation { string subject = 1; } repeated Violation violations = 1; }
)";

std::string serialized(ProtoTypes& types, const std::string& type, const std::string& text) {
  return types.make(type, text)->SerializeAsString();
}

// A google.protobuf.Any's text holding `value` (bytes) of `type`.
std::string any_of(const std::string& type, const std::string& value) {
  std::string escaped;
  for (unsigned char c : value)
    escaped += "\\" + std::to_string(c / 64) + std::to_string(c / 8 % 8) + std::to_string(c % 8);
  return "details { type_url: 'type.googleapis.com/" + type + "' value: '" + escaped + "' }";
}

}  // namespace

TEST_CASE("grpc retry info: the delay of the RetryInfo among the details") {
  ProtoTypes types(k_rpc);
  const std::string retry =
      serialized(types, "google.rpc.RetryInfo", "retry_delay { seconds: 1 nanos: 250000001 }");
  const std::string quota =
      serialized(types, "google.rpc.QuotaFailure", "violations { subject: 'user:42' }");
  const std::string status =
      serialized(types, "google.rpc.Status",
                 "code: 8 message: 'slow down' " + any_of("google.rpc.QuotaFailure", quota) + " " +
                     any_of("google.rpc.RetryInfo", retry));
  const auto delay = retry_delay_of_status(status);
  REQUIRE(delay.has_value());
  REQUIRE(delay->has_value());
  CHECK((*delay)->ms == 1251);  // rounded up: never shorter than the hint
  CHECK_FALSE((*delay)->whole_seconds);

  const std::string whole = serialized(
      types, "google.rpc.Status",
      "code: 8 " + any_of("google.rpc.RetryInfo",
                          serialized(types, "google.rpc.RetryInfo", "retry_delay { seconds: 3 }")));
  CHECK(retry_delay_of_status(whole)->value().ms == 3000);
  CHECK(retry_delay_of_status(whole)->value().whole_seconds);
}

TEST_CASE("grpc retry info: none, or bytes that are not a Status") {
  ProtoTypes types(k_rpc);
  // No details; another detail only; a RetryInfo without a delay.
  CHECK_FALSE(
      retry_delay_of_status(serialized(types, "google.rpc.Status", "code: 8"))->has_value());
  CHECK_FALSE(retry_delay_of_status("")->has_value());
  const std::string quota =
      serialized(types, "google.rpc.QuotaFailure", "violations { subject: 'user:42' }");
  CHECK_FALSE(retry_delay_of_status(
                  serialized(types, "google.rpc.Status", any_of("google.rpc.QuotaFailure", quota)))
                  ->has_value());
  CHECK_FALSE(retry_delay_of_status(
                  serialized(types, "google.rpc.Status", any_of("google.rpc.RetryInfo", "")))
                  ->has_value());

  const std::string status =
      serialized(types, "google.rpc.Status",
                 any_of("google.rpc.RetryInfo",
                        serialized(types, "google.rpc.RetryInfo", "retry_delay { seconds: 3 }")));
  CHECK_FALSE(retry_delay_of_status(status.substr(0, status.size() - 2)).has_value());  // cut
  CHECK_FALSE(retry_delay_of_status("\xff\xff\xff").has_value());
}
