// A gRPC target made from its options: the types loaded from --proto files (imports through
// --import-path, the well-known types built in), the method found, --data read as JSON into
// the request, and every option's mistake named by its flag.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <google/protobuf/message.h>

#include "targets/grpc/grpc_calls.hpp"

using rlcheck::grpc_target::GrpcCalls;
using rlcheck::grpc_target::GrpcOptions;

namespace {

// A folder of .proto files under the system's temporary folder, removed at the end.
class ProtoFolder {
 public:
  ProtoFolder() {
    path_ = std::filesystem::temp_directory_path() /
            ("rlcheck-grpc-target-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_ / "limits");
    write("limits/descriptor.proto", R"(
syntax = "proto3";
package limits;
message Descriptor { message Entry { string key = 1; string value = 2; } repeated Entry entries = 1; }
)");
    write("service.proto", R"(
syntax = "proto3";
package demo.v1;
import "limits/descriptor.proto";
import "google/protobuf/duration.proto";
service Quota {
  rpc Take(TakeRequest) returns (TakeReply);
  rpc Watch(TakeRequest) returns (stream TakeReply);
}
message TakeRequest {
  string domain = 1;
  repeated limits.Descriptor descriptors = 2;
  uint32 hits = 3;
}
message TakeReply {
  enum Code { UNKNOWN = 0; OK = 1; OVER_LIMIT = 2; }
  Code code = 1;
  google.protobuf.Duration reset = 2;
}
)");
  }
  ~ProtoFolder() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  void write(const std::string& name, const std::string& text) {
    std::ofstream(path_ / name) << text;
  }
  std::filesystem::path path_;
};

GrpcOptions options_in(const ProtoFolder& folder) {
  GrpcOptions options;
  options.address = "127.0.0.1:1";
  options.method = "demo.v1.Quota/Take";
  options.proto_files = {folder.file("service.proto")};
  options.data =
      R"({"domain": "edge", "descriptors": [{"entries": [{"key": "user", "value": "u{id}"}]}],
          "hits": {cost}})";
  options.denied_when = {"code=OVER_LIMIT"};
  options.hint_field = "reset";
  return options;
}

std::string error_of(const GrpcOptions& options) {
  auto target = GrpcCalls::make(options);
  REQUIRE_FALSE(target.has_value());
  return target.error();
}

}  // namespace

TEST_CASE("grpc target: --data becomes the request, placeholders expanded per call") {
  ProtoFolder folder;
  auto target = GrpcCalls::make(options_in(folder));
  if (!target)
    FAIL(target.error());
  CHECK((*target)->method_path() == "/demo.v1.Quota/Take");
  CHECK((*target)->reads_response());

  rlcheck::engine::PlaceholderContext context;
  context.identity = 42;
  context.cost = 3;
  std::string json;
  std::string bytes;
  std::string error;
  REQUIRE((*target)->encode_request(context, json, bytes, error));
  auto request = (*target)->new_request();
  REQUIRE(request->ParseFromString(bytes));
  CHECK(request->ShortDebugString() ==
        R"(domain: "edge" descriptors { entries { key: "user" value: "u42" } } hits: 3)");

  // Another identity: nothing of the last call stays.
  context.identity = 7;
  context.cost = 1;
  REQUIRE((*target)->encode_request(context, json, bytes, error));
  REQUIRE(request->ParseFromString(bytes));
  CHECK(request->ShortDebugString() ==
        R"(domain: "edge" descriptors { entries { key: "user" value: "u7" } } hits: 1)");
}

TEST_CASE("grpc target: an import path instead of the file's folder, and method spellings") {
  ProtoFolder folder;
  GrpcOptions options = options_in(folder);
  options.import_paths = {folder.path()};
  options.method = "/demo.v1.Quota/Take";
  CHECK(GrpcCalls::make(options).has_value());
  options.method = "demo.v1.Quota.Take";
  CHECK(GrpcCalls::make(options).has_value());
}

TEST_CASE("grpc target: each mistake is one line naming its flag") {
  ProtoFolder folder;
  GrpcOptions options = options_in(folder);

  options.proto_files = {};
  CHECK(error_of(options).starts_with("--proto: "));
  options.proto_files = {folder.file("missing.proto")};
  CHECK(error_of(options).starts_with("--proto: "));

  options = options_in(folder);
  options.method = "Take";
  CHECK(error_of(options).starts_with("--method: "));
  options.method = "demo.v1.Quotas/Take";
  CHECK(error_of(options) == "--method: no service demo.v1.Quotas in the --proto files");
  options.method = "demo.v1.Quota/Give";
  CHECK(error_of(options) == "--method: demo.v1.Quota has no method Give (it has Take, Watch)");
  options.method = "demo.v1.Quota/Watch";
  CHECK(error_of(options).find("streams") != std::string::npos);

  options = options_in(folder);
  options.data = R"({"domain": 5)";
  CHECK(error_of(options).starts_with("--data: "));
  options.data = R"({"domian": "edge"})";
  CHECK(error_of(options).starts_with("--data: "));

  options = options_in(folder);
  options.denied_code = "EXHAUSTED";
  CHECK(error_of(options).starts_with("--denied-code: "));
  options.denied_code = "OK";
  CHECK(error_of(options).starts_with("--denied-code: "));

  options = options_in(folder);
  options.denied_when = {"code=DENIED"};
  CHECK(error_of(options).starts_with("--denied-when: "));
  options = options_in(folder);
  options.hint_field = "resets";
  CHECK(error_of(options).starts_with("--hint-field: "));
  options = options_in(folder);
  options.metadata = {"no colon"};
  CHECK(error_of(options).starts_with("--metadata: "));

  options = options_in(folder);
  options.use_tls = true;
  options.tls.insecure = true;
  CHECK(error_of(options).starts_with("--insecure: "));
  options.tls.insecure = false;
  options.tls.ca_file = folder.file("no-ca.pem");
  CHECK(error_of(options).starts_with("--tls-ca: "));
  options.tls.ca_file.clear();
  options.tls.cert_file = folder.file("service.proto");
  CHECK(error_of(options).starts_with("--tls-cert: "));
}

TEST_CASE("grpc target: a syntax error in a .proto file names the file and line") {
  ProtoFolder folder;
  std::ofstream(folder.file("broken.proto")) << "syntax = \"proto3\";\nmessage A { int32 = 1; }\n";
  GrpcOptions options = options_in(folder);
  options.proto_files = {folder.file("broken.proto")};
  const std::string error = error_of(options);
  CHECK(error.starts_with("--proto: broken.proto:2:"));
}
