// Server reflection's messages encoded and read by hand (targets/grpc/reflection_messages),
// held to protobuf's own encoding of grpc/reflection/v1alpha/reflection.proto.

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include <google/protobuf/descriptor.pb.h>

#include "shared/proto_types.hpp"
#include "targets/grpc/reflection_messages.hpp"

using rlcheck::grpc_target::decode_reflection_reply;
using rlcheck::grpc_target::encode_reflection_request;
using rlcheck::grpc_target::ReflectionRequest;
using rlcheck::testing::ProtoTypes;

namespace {

// grpc.reflection.v1alpha's messages as far as rlcheck reads them (field numbers as in
// reflection.proto).
constexpr const char* k_reflection = R"(
syntax = "proto3";
package grpc.reflection.v1alpha;
message ServerReflectionRequest {
  string host = 1;
  oneof message_request {
    string file_by_filename = 3;
    string file_containing_symbol = 4;
    string list_services = 7;
  }
}
message ServerReflectionResponse {
  string valid_host = 1;
  ServerReflectionRequest original_request = 2;
  oneof message_response {
    FileDescriptorResponse file_descriptor_response = 4;
    ListServiceResponse list_services_response = 6;
    ErrorResponse error_response = 7;
  }
}
message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
message ListServiceResponse { repeated ServiceResponse service = 1; }
message ServiceResponse { string name = 1; }
message ErrorResponse { int32 error_code = 1; string error_message = 2; }
)";

constexpr const char* k_response = "grpc.reflection.v1alpha.ServerReflectionResponse";

// A FileDescriptorProto named `name`, serialized.
std::string file_named(const std::string& name, const std::string& dependency = {}) {
  google::protobuf::FileDescriptorProto file;
  file.set_name(name);
  file.set_package("demo.v1");
  if (!dependency.empty())
    file.add_dependency(dependency);
  file.add_message_type()->set_name("M");
  return file.SerializeAsString();
}

// `bytes` as a text-format string literal.
std::string quoted(const std::string& bytes) {
  std::string text = "'";
  for (unsigned char c : bytes)
    text += "\\" + std::to_string(c / 64) + std::to_string(c / 8 % 8) + std::to_string(c % 8);
  return text + "'";
}

}  // namespace

TEST_CASE("grpc reflection messages: a request reads back as protobuf reads it") {
  ProtoTypes types(k_reflection);
  auto request = types.make("grpc.reflection.v1alpha.ServerReflectionRequest");

  REQUIRE(request->ParseFromString(encode_reflection_request(
      {"", ReflectionRequest::Ask::file_containing_symbol, "demo.v1.Quota"})));
  CHECK(request->ShortDebugString() == R"(file_containing_symbol: "demo.v1.Quota")");

  REQUIRE(request->ParseFromString(
      encode_reflection_request({"limits.example:443", ReflectionRequest::Ask::file_by_filename,
                                 "limits/descriptor.proto"})));
  CHECK(request->ShortDebugString() ==
        R"(host: "limits.example:443" file_by_filename: "limits/descriptor.proto")");

  // Longer than 127 bytes: the length takes two bytes.
  const std::string long_name(300, 'x');
  REQUIRE(request->ParseFromString(
      encode_reflection_request({"", ReflectionRequest::Ask::file_by_filename, long_name})));
  CHECK(request->ShortDebugString() == R"(file_by_filename: ")" + long_name + R"(")");
}

TEST_CASE("grpc reflection messages: a reply's files, whatever comes beside them") {
  ProtoTypes types(k_reflection);
  const std::string service = file_named("demo/service.proto", "limits/descriptor.proto");
  const std::string limits = file_named("limits/descriptor.proto");
  const std::string bytes =
      types
          .make(k_response,
                "valid_host: 'localhost' original_request { file_containing_symbol: "
                "'demo.v1.Quota' } file_descriptor_response { file_descriptor_proto: " +
                    quoted(service) + " file_descriptor_proto: " + quoted(limits) + " }")
          ->SerializeAsString();
  const auto reply = decode_reflection_reply(bytes);
  REQUIRE_MESSAGE(reply.has_value(), reply.error());
  CHECK_FALSE(reply->error);
  REQUIRE(reply->files.size() == 2);
  CHECK(reply->files[0] == service);
  CHECK(reply->files[1] == limits);

  // Cut anywhere inside the files: an error, never a crash nor a shorter list.
  const size_t start = bytes.find(service);
  for (size_t cut = start; cut < bytes.size(); cut += 7) {
    INFO(cut);
    CHECK_FALSE(decode_reflection_reply(bytes.substr(0, cut)).has_value());
  }
}

TEST_CASE("grpc reflection messages: an error reply, and replies that answer nothing asked") {
  ProtoTypes types(k_reflection);
  const auto error = decode_reflection_reply(
      types
          .make(k_response,
                "error_response { error_code: 5 error_message: 'unknown symbol: demo.v1.Quotas' }")
          ->SerializeAsString());
  REQUIRE(error.has_value());
  CHECK(error->error);
  CHECK(error->error_code == 5);
  CHECK(error->error_message == "unknown symbol: demo.v1.Quotas");
  CHECK(error->files.empty());

  // A later member of the oneof replaces an earlier one, as protobuf reads it.
  const std::string files =
      types.make(k_response, "file_descriptor_response { file_descriptor_proto: 'x' }")
          ->SerializeAsString();
  const std::string failed =
      types.make(k_response, "error_response { error_code: 5 }")->SerializeAsString();
  CHECK(decode_reflection_reply(files + failed)->error);
  CHECK_FALSE(decode_reflection_reply(failed + files)->error);
  CHECK(decode_reflection_reply(files + files)->files.size() == 2);

  const auto listed = decode_reflection_reply(
      types.make(k_response, "list_services_response { service { name: 'demo.v1.Quota' } }")
          ->SerializeAsString());
  REQUIRE_FALSE(listed.has_value());
  CHECK(listed.error().find("neither files nor an error") != std::string::npos);
  CHECK_FALSE(decode_reflection_reply("").has_value());
  CHECK_FALSE(decode_reflection_reply("\x22\x05"
                                      "ab")
                  .has_value());                                         // field 4, cut short
  CHECK_FALSE(decode_reflection_reply("\x22\x02\x0a\x05").has_value());  // its file cut short
  CHECK_FALSE(decode_reflection_reply(std::string_view("\x00\x01", 2)).has_value());  // field 0
  CHECK_FALSE(decode_reflection_reply("\x23").has_value());  // a group where files belong
}
