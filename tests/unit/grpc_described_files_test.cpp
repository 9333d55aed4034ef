// The asks of server reflection (targets/grpc/server_reflection's collect_described_files) over
// a stream played here: the file that defines the service first, then each import by name that
// no reply carried, never a well-known type; and every way the replies can fall short.

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.pb.h>

#include "shared/proto_types.hpp"
#include "targets/grpc/server_reflection.hpp"

using rlcheck::grpc_target::collect_described_files;
using rlcheck::grpc_target::ReflectionFailure;
using rlcheck::testing::ProtoTypes;

namespace {

constexpr const char* k_messages = R"(
syntax = "proto3";
package grpc.reflection.v1alpha;
message ServerReflectionRequest {
  string host = 1;
  oneof message_request { string file_by_filename = 3; string file_containing_symbol = 4; }
}
message ServerReflectionResponse {
  oneof message_response {
    FileDescriptorResponse file_descriptor_response = 4;
    ErrorResponse error_response = 7;
  }
}
message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
message ErrorResponse { int32 error_code = 1; string error_message = 2; }
)";

std::string file_named(const std::string& name, const std::vector<std::string>& imports = {}) {
  google::protobuf::FileDescriptorProto file;
  file.set_name(name);
  for (const std::string& dependency : imports)
    file.add_dependency(dependency);
  return file.SerializeAsString();
}

// A service's reflection as a map: each symbol or file name to the files its reply carries (a
// name it lacks: NOT_FOUND). Records what it was asked.
class PlayedReflection {
 public:
  PlayedReflection() : types_(k_messages) {}
  std::map<std::string, std::vector<std::string>> replies;
  std::vector<std::string> asked;

  bool ask(const std::string& request_bytes, std::string& reply) {
    auto request = types_.make("grpc.reflection.v1alpha.ServerReflectionRequest");
    REQUIRE(request->ParseFromString(request_bytes));
    asked.push_back(request->ShortDebugString());
    const auto* fields = request->GetDescriptor();
    const auto& reflection = *request->GetReflection();
    const std::string name =
        reflection.HasField(*request, fields->FindFieldByName("file_by_filename"))
            ? reflection.GetString(*request, fields->FindFieldByName("file_by_filename"))
            : reflection.GetString(*request, fields->FindFieldByName("file_containing_symbol"));
    auto response = types_.make("grpc.reflection.v1alpha.ServerReflectionResponse");
    const auto found = replies.find(name);
    auto& answer = *response->GetReflection();
    if (found == replies.end()) {
      auto* error = answer.MutableMessage(
          response.get(), response->GetDescriptor()->FindFieldByName("error_response"));
      error->GetReflection()->SetInt32(error, error->GetDescriptor()->FindFieldByName("error_code"),
                                       5);
      error->GetReflection()->SetString(
          error, error->GetDescriptor()->FindFieldByName("error_message"), "not found: " + name);
    } else {
      auto* files = answer.MutableMessage(
          response.get(), response->GetDescriptor()->FindFieldByName("file_descriptor_response"));
      for (const std::string& file : found->second) {
        files->GetReflection()->AddString(
            files, files->GetDescriptor()->FindFieldByName("file_descriptor_proto"), file);
      }
    }
    reply = response->SerializeAsString();
    return true;
  }

  auto collect(const std::string& service) {
    return collect_described_files(
        "limits.test:443", service,
        [this](const std::string& request, std::string& reply) { return ask(request, reply); },
        [] {
          return ReflectionFailure{ReflectionFailure::Kind::unreachable, "ended"};
        });
  }

 private:
  ProtoTypes types_;
};

}  // namespace

TEST_CASE("grpc server reflection: the service's file, then each import no reply carried") {
  PlayedReflection played;
  const std::string service = file_named(
      "demo/service.proto",
      {"limits/descriptor.proto", "google/protobuf/duration.proto", "limits/codes.proto"});
  const std::string limits = file_named("limits/descriptor.proto", {"limits/codes.proto"});
  const std::string codes = file_named("limits/codes.proto");
  played.replies["demo.v1.Quota"] = {service, codes};  // one import carried with it
  played.replies["limits/descriptor.proto"] = {limits};
  const auto files = played.collect("demo.v1.Quota");
  REQUIRE_MESSAGE(files.has_value(), files.error().message);
  CHECK(*files == std::vector<std::string>{service, codes, limits});
  // Duration's file is built in; codes.proto came with the first reply.
  CHECK(played.asked == std::vector<std::string>{R"(file_containing_symbol: "demo.v1.Quota")",
                                                 R"(file_by_filename: "limits/descriptor.proto")"});
}

TEST_CASE("grpc server reflection: an unknown service, a missing import, replies that fall short") {
  PlayedReflection played;
  auto unknown = played.collect("demo.v1.Quotas");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().kind == ReflectionFailure::Kind::unknown_service);
  CHECK(unknown.error().message ==
        "--method: limits.test:443 has no service demo.v1.Quotas (its server reflection says: "
        "not found: demo.v1.Quotas)");

  played.replies["demo.v1.Quota"] = {file_named("demo/service.proto", {"limits/gone.proto"})};
  auto missing = played.collect("demo.v1.Quota");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ReflectionFailure::Kind::unusable);
  CHECK(missing.error().message.find("limits/gone.proto") != std::string::npos);
  CHECK(missing.error().message.find("--proto FILE") != std::string::npos);

  played.replies["demo.v1.Quota"] = {};
  CHECK(played.collect("demo.v1.Quota").error().kind == ReflectionFailure::Kind::unusable);
  played.replies["demo.v1.Quota"] = {"\x0a\x09short"};
  CHECK(played.collect("demo.v1.Quota").error().message.find("does not parse") !=
        std::string::npos);

  // A stream that ends, and one whose replies are not reflection's.
  auto ended = collect_described_files(
      "limits.test:443", "demo.v1.Quota", [](const std::string&, std::string&) { return false; },
      [] {
        return ReflectionFailure{ReflectionFailure::Kind::not_offered, "no reflection"};
      });
  CHECK(ended.error().kind == ReflectionFailure::Kind::not_offered);
  auto garbled = collect_described_files(
      "limits.test:443", "demo.v1.Quota",
      [](const std::string&, std::string& reply) {
        reply =
            "\x22\x05"
            "ab";
        return true;
      },
      [] { return ReflectionFailure{}; });
  CHECK(garbled.error().kind == ReflectionFailure::Kind::unusable);
}

TEST_CASE("grpc server reflection: a service that names files without end is not followed far") {
  // Each file imports one more that the next reply carries, each importing another.
  int served = 0;
  auto endless = collect_described_files(
      "limits.test:443", "demo.v1.Quota",
      [&served](const std::string&, std::string& reply) {
        ++served;
        const std::string file = file_named("f" + std::to_string(served) + ".proto",
                                            {"f" + std::to_string(served + 1) + ".proto"});
        // FileDescriptorResponse{file} inside the response's field 4, each length one byte.
        const std::string inner = "\x0a" + std::string(1, static_cast<char>(file.size())) + file;
        reply = "\x22" + std::string(1, static_cast<char>(inner.size())) + inner;
        return true;
      },
      [] { return ReflectionFailure{}; });
  REQUIRE_FALSE(endless.has_value());
  CHECK(endless.error().kind == ReflectionFailure::Kind::unusable);
  CHECK(served == 1000);
}
