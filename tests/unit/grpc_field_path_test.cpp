// --denied-when and --hint-field: paths into a response checked against its type, and read by
// reflection (Envoy's rate limit response as the example).

#include <doctest/doctest.h>

#include <string>

#include "shared/proto_types.hpp"
#include "targets/grpc/field_path.hpp"

using rlcheck::grpc_target::FieldMatch;
using rlcheck::grpc_target::FieldPath;
using rlcheck::testing::ProtoTypes;

namespace {

constexpr const char* k_rls_like = R"(
syntax = "proto3";
package t;
import "google/protobuf/duration.proto";
message Response {
  enum Code { UNKNOWN = 0; OK = 1; OVER_LIMIT = 2; }
  message Status {
    Code code = 1;
    uint32 limit_remaining = 3;
    google.protobuf.Duration duration_until_reset = 4;
    double wait_seconds = 5;
  }
  Code overall_code = 1;
  repeated Status statuses = 2;
  bool limited = 3;
  string reason = 4;
  map<string, string> labels = 5;
  int64 retry_in = 6;
}
)";

}  // namespace

TEST_CASE("grpc field path: names, JSON names and indexes, checked against the type") {
  ProtoTypes types(k_rls_like);
  const auto& response = types.type("t.Response");
  CHECK(FieldPath::parse(response, "overall_code").has_value());
  CHECK(FieldPath::parse(response, "overallCode").has_value());
  CHECK(FieldPath::parse(response, "statuses.0.duration_until_reset").has_value());
  CHECK(FieldPath::parse(response, "statuses.12.durationUntilReset").has_value());

  const auto missing = FieldPath::parse(response, "statuses.0.remaining");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().find("no field remaining") != std::string::npos);
  CHECK(missing.error().find("limit_remaining") != std::string::npos);  // what it has
  CHECK(FieldPath::parse(response, "statuses").error().find("statuses.0") != std::string::npos);
  CHECK(FieldPath::parse(response, "statuses.x").error().find("an index") != std::string::npos);
  CHECK(FieldPath::parse(response, "overall_code.x").error().find("no fields") !=
        std::string::npos);
  CHECK(FieldPath::parse(response, "labels").error().find("map") != std::string::npos);
  CHECK(FieldPath::parse(response, "statuses..code").error().find("empty") != std::string::npos);
}

TEST_CASE("grpc field path: values read as text, enums by name") {
  ProtoTypes types(k_rls_like);
  const auto& type = types.type("t.Response");
  auto message = types.make("t.Response",
                            "overall_code: OVER_LIMIT statuses { code: OK limit_remaining: 7 } "
                            "statuses { code: OVER_LIMIT } limited: true reason: 'quota'");
  CHECK(FieldPath::parse(type, "overall_code")->read_text(*message) == "OVER_LIMIT");
  CHECK(FieldPath::parse(type, "statuses.0.code")->read_text(*message) == "OK");
  CHECK(FieldPath::parse(type, "statuses.1.code")->read_text(*message) == "OVER_LIMIT");
  CHECK(FieldPath::parse(type, "statuses.0.limit_remaining")->read_text(*message) == "7");
  CHECK(FieldPath::parse(type, "limited")->read_text(*message) == "true");
  CHECK(FieldPath::parse(type, "reason")->read_text(*message) == "quota");
  // Past the end: not reached. Unset scalars read their default, as proto3 has it.
  CHECK_FALSE(FieldPath::parse(type, "statuses.2.code")->read_text(*message).has_value());
  CHECK(FieldPath::parse(type, "retry_in")->read_text(*message) == "0");
}

TEST_CASE("grpc field path: waits from a Duration (to the ms, rounded up) or seconds") {
  ProtoTypes types(k_rls_like);
  const auto& type = types.type("t.Response");
  auto message = types.make(
      "t.Response",
      "statuses { duration_until_reset { seconds: 2 nanos: 500000 } wait_seconds: 1.25 } "
      "statuses { duration_until_reset { seconds: 3 } } statuses { code: OK } retry_in: 4");
  bool whole = true;
  CHECK(FieldPath::parse(type, "statuses.0.duration_until_reset")->read_wait_ms(*message, &whole) ==
        2001);
  CHECK_FALSE(whole);
  CHECK(FieldPath::parse(type, "statuses.1.duration_until_reset")->read_wait_ms(*message, &whole) ==
        3000);
  CHECK(whole);
  CHECK(FieldPath::parse(type, "statuses.0.wait_seconds")->read_wait_ms(*message, &whole) == 1250);
  CHECK_FALSE(whole);
  CHECK(FieldPath::parse(type, "retry_in")->read_wait_ms(*message, &whole) == 4000);
  CHECK(whole);
  // A Duration not set is no hint; neither is a status past the end.
  CHECK_FALSE(FieldPath::parse(type, "statuses.2.duration_until_reset")
                  ->read_wait_ms(*message)
                  .has_value());
  CHECK_FALSE(FieldPath::parse(type, "statuses.5.duration_until_reset")
                  ->read_wait_ms(*message)
                  .has_value());
}

TEST_CASE("grpc field match: FIELD=VALUE, the value checked against what the field holds") {
  ProtoTypes types(k_rls_like);
  const auto& type = types.type("t.Response");
  auto over = types.make("t.Response", "overall_code: OVER_LIMIT limited: true");
  auto ok = types.make("t.Response", "overall_code: OK");

  const auto by_name = FieldMatch::parse(type, "overall_code=OVER_LIMIT");
  REQUIRE(by_name.has_value());
  CHECK(by_name->matches(*over));
  CHECK_FALSE(by_name->matches(*ok));
  const auto by_number = FieldMatch::parse(type, "overall_code=2");
  REQUIRE(by_number.has_value());
  CHECK(by_number->matches(*over));
  CHECK(FieldMatch::parse(type, "limited=true")->matches(*over));
  CHECK_FALSE(FieldMatch::parse(type, "limited=true")->matches(*ok));
  CHECK(FieldMatch::parse(type, "statuses.0.code=OVER_LIMIT").has_value());

  const auto bad_enum = FieldMatch::parse(type, "overall_code=DENIED");
  REQUIRE_FALSE(bad_enum.has_value());
  CHECK(bad_enum.error().find("UNKNOWN, OK, OVER_LIMIT") != std::string::npos);
  CHECK(FieldMatch::parse(type, "overall_code").error().find("FIELD=VALUE") != std::string::npos);
  CHECK(FieldMatch::parse(type, "limited=yes").error().find("true or false") != std::string::npos);
  CHECK(FieldMatch::parse(type, "retry_in=soon").error().find("a number") != std::string::npos);
  CHECK(FieldMatch::parse(type, "statuses.0=1").error().find("a message") != std::string::npos);
}
