// How a finished gRPC call reads as a decision: the denied status, --denied-when on OK
// responses, the hint's three places, and errors by status.

#include <doctest/doctest.h>

#include <string>

#include "shared/proto_types.hpp"
#include "targets/grpc/call_decision.hpp"
#include "targets/grpc/status_codes.hpp"

using namespace rlcheck;
using grpc_target::CallEnd;
using grpc_target::decide_call;
using grpc_target::DecisionRules;
using grpc_target::FieldMatch;
using grpc_target::FieldPath;
using testing::ProtoTypes;

namespace {

constexpr int64_t k_now = 1'700'000'000;

constexpr const char* k_types = R"(
syntax = "proto3";
package t;
import "google/protobuf/duration.proto";
message Any { string type_url = 1; bytes value = 2; }
message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
message RetryInfo { google.protobuf.Duration retry_delay = 1; }
message Response {
  enum Code { UNKNOWN = 0; OK = 1; OVER_LIMIT = 2; }
  message DescriptorStatus { Code code = 1; google.protobuf.Duration duration_until_reset = 4; }
  Code overall_code = 1;
  repeated DescriptorStatus statuses = 2;
}
)";

// grpc-status-details-bin with a RetryInfo of `ms`.
std::string details_with_retry(ProtoTypes& types, int64_t ms) {
  auto info =
      types.make("t.RetryInfo", "retry_delay { seconds: " + std::to_string(ms / 1000) +
                                    " nanos: " + std::to_string(ms % 1000 * 1'000'000) + " }");
  auto status = types.make("t.Status", "code: 8");
  auto* reflection = status->GetReflection();
  auto* any =
      reflection->AddMessage(status.get(), status->GetDescriptor()->FindFieldByName("details"));
  any->GetReflection()->SetString(any, any->GetDescriptor()->FindFieldByName("type_url"),
                                  "type.googleapis.com/google.rpc.RetryInfo");
  any->GetReflection()->SetString(any, any->GetDescriptor()->FindFieldByName("value"),
                                  info->SerializeAsString());
  return status->SerializeAsString();
}

}  // namespace

TEST_CASE("grpc decision: OK is an admission, the denied code a denial, others errors") {
  DecisionRules rules;
  CallEnd end;
  CHECK(decide_call(end, rules, k_now).outcome == engine::Outcome::allowed);

  end.code = 8;
  end.message = "/fixture.Echo/Say is rejected by grpc_ratelimit middleware";
  engine::Decision denied = decide_call(end, rules, k_now);
  CHECK(denied.outcome == engine::Outcome::denied);
  CHECK(denied.hint_expected);  // and none was given
  CHECK_FALSE(denied.retry_ms.has_value());

  end.code = 12;
  end.message = "unknown method Sey";
  engine::Decision error = decide_call(end, rules, k_now);
  CHECK(error.outcome == engine::Outcome::error);
  CHECK(error.error == engine::ErrorKind::server_error);
  CHECK(error.error_message == "UNIMPLEMENTED: unknown method Sey");
  CHECK(grpc_target::error_kind_of_status(14) == engine::ErrorKind::connection_lost);
  CHECK(grpc_target::error_kind_of_status(4) == engine::ErrorKind::timeout);

  // Another denied code: RESOURCE_EXHAUSTED is then an error.
  rules.denied_code = 14;
  end.code = 8;
  CHECK(decide_call(end, rules, k_now).error == engine::ErrorKind::server_error);
  end.code = 14;
  CHECK(decide_call(end, rules, k_now).outcome == engine::Outcome::denied);
}

TEST_CASE("grpc decision: the hint from RetryInfo, else retry-after metadata") {
  ProtoTypes types(k_types);
  DecisionRules rules;
  CallEnd end;
  end.code = 8;
  end.details = details_with_retry(types, 1250);
  end.retry_after = "2";
  engine::Decision decision = decide_call(end, rules, k_now);
  CHECK(decision.retry_ms == 1250);
  CHECK(decision.hint_resolution_ms == 1);

  end.details.clear();
  decision = decide_call(end, rules, k_now);
  CHECK(decision.retry_ms == 2000);
  CHECK(decision.hint_resolution_ms == 1000);

  end.retry_after = "1.5";
  decision = decide_call(end, rules, k_now);
  CHECK_FALSE(decision.retry_ms.has_value());
  CHECK(decision.hint_invalid);
  CHECK(decision.hint_note.find("retry-after metadata") != std::string::npos);

  end.retry_after.reset();
  end.details = "\xff\xff";
  decision = decide_call(end, rules, k_now);
  CHECK(decision.hint_invalid);
  CHECK(decision.hint_note.find("grpc-status-details-bin") != std::string::npos);
}

TEST_CASE("grpc decision: --denied-when and --hint-field read an OK response (Envoy RLS)") {
  ProtoTypes types(k_types);
  const auto& type = types.type("t.Response");
  DecisionRules rules;
  rules.denied_when.push_back(*FieldMatch::parse(type, "overall_code=OVER_LIMIT"));
  rules.hint_field = *FieldPath::parse(type, "statuses.0.duration_until_reset");

  auto over = types.make("t.Response",
                         "overall_code: OVER_LIMIT statuses { code: OVER_LIMIT "
                         "duration_until_reset { seconds: 0 nanos: 734000000 } }");
  CallEnd end;
  end.response = over.get();
  engine::Decision denied = decide_call(end, rules, k_now);
  CHECK(denied.outcome == engine::Outcome::denied);
  CHECK(denied.retry_ms == 734);
  CHECK(denied.hint_resolution_ms == 1);

  auto ok = types.make(
      "t.Response", "overall_code: OK statuses { code: OK duration_until_reset { seconds: 9 } }");
  end.response = ok.get();
  engine::Decision allowed = decide_call(end, rules, k_now);
  CHECK(allowed.outcome == engine::Outcome::allowed);
  CHECK_FALSE(allowed.retry_ms.has_value());  // an admission carries no retry hint

  // A denial whose field is not there: the metadata may still say.
  auto bare = types.make("t.Response", "overall_code: OVER_LIMIT");
  end.response = bare.get();
  end.retry_after = "1";
  CHECK(decide_call(end, rules, k_now).retry_ms == 1000);

  CallEnd unreadable;
  unreadable.response_unreadable = true;
  CHECK(decide_call(unreadable, rules, k_now).error == engine::ErrorKind::bad_reply);
}

TEST_CASE("grpc status codes: by name or number") {
  CHECK(grpc_target::parse_status_code("RESOURCE_EXHAUSTED") == 8);
  CHECK(grpc_target::parse_status_code("resource_exhausted") == 8);
  CHECK(grpc_target::parse_status_code("14") == 14);
  CHECK_FALSE(grpc_target::parse_status_code("17").has_value());
  CHECK(grpc_target::parse_status_code("EXHAUSTED").error().find("RESOURCE_EXHAUSTED") !=
        std::string::npos);
  CHECK(grpc_target::status_code_name(16) == "UNAUTHENTICATED");
  CHECK(grpc_target::status_code_name(42) == "CODE_42");
}
