// A gRPC target made from its options: the types loaded from --proto files (imports through
// --import-path, the well-known types built in) or from the files a service described by
// server reflection, the method found, --data read as JSON into
// the request, and every option's mistake named by its flag.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
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

// File `name` of the folder as a service describes it by server reflection: a serialized
// FileDescriptorProto, its imports by name.
std::string described(const ProtoFolder& folder, const std::string& name) {
  std::ifstream in(folder.file(name));
  std::stringstream read;
  read << in.rdbuf();
  const std::string text = read.str();
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  google::protobuf::io::Tokenizer tokenizer(&input, nullptr);
  google::protobuf::compiler::Parser parser;
  google::protobuf::FileDescriptorProto file;
  REQUIRE(parser.Parse(&tokenizer, &file));
  file.set_name(name);
  return file.SerializeAsString();
}

// The request `calls` makes for `identity` at `cost`, as protobuf's debug text; `json` and `bytes`
// are the caller's, kept from one call to the next as a client keeps them.
std::string request_text(const GrpcCalls& calls, uint32_t identity, int64_t cost, std::string& json,
                         std::string& bytes) {
  rlcheck::engine::PlaceholderContext context;
  context.identity = identity;
  context.cost = cost;
  std::string error;
  REQUIRE(calls.encode_request(context, json, bytes, error));
  auto request = calls.new_request();
  REQUIRE(request->ParseFromString(bytes));
  return request->ShortDebugString();
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

  std::string json;
  std::string bytes;
  CHECK(request_text(**target, 42, 3, json, bytes) ==
        R"(domain: "edge" descriptors { entries { key: "user" value: "u42" } } hits: 3)");

  // Another identity: nothing of the last call stays.
  CHECK(request_text(**target, 7, 1, json, bytes) ==
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

TEST_CASE("grpc target: the types from the files a service described, in place of --proto") {
  ProtoFolder folder;
  GrpcOptions options = options_in(folder);
  options.proto_files = {};
  // duration.proto is built in: a service need not describe it.
  options.described_files = {described(folder, "service.proto"),
                             described(folder, "limits/descriptor.proto")};
  auto target = GrpcCalls::make(options);
  if (!target)
    FAIL(target.error());
  CHECK((*target)->method_path() == "/demo.v1.Quota/Take");
  std::string json;
  std::string bytes;
  CHECK(request_text(**target, 42, 3, json, bytes) ==
        R"(domain: "edge" descriptors { entries { key: "user" value: "u42" } } hits: 3)");

  // A file described twice: the first one counts.
  options.described_files.push_back(described(folder, "service.proto"));
  CHECK(GrpcCalls::make(options).has_value());

  options.method = "demo.v1.Quotas/Take";
  CHECK(error_of(options) ==
        "--method: no service demo.v1.Quotas in the files the service described by reflection");

  // An import the service did not describe.
  options = options_in(folder);
  options.proto_files = {};
  options.described_files = {described(folder, "service.proto")};
  const std::string missing = error_of(options);
  CHECK(missing.starts_with("the service's reflection describes types that do not load: "));
  CHECK(missing.find("limits/descriptor.proto") != std::string::npos);
  options.described_files = {"\x0a\x09short"};
  CHECK(error_of(options).find("does not parse") != std::string::npos);
}

TEST_CASE("grpc target: before the service described its types, what needs none is checked") {
  ProtoFolder folder;
  GrpcOptions options = options_in(folder);
  options.proto_files = {};
  options.data = R"({"domian": "{id}"})";  // checked once the types are known
  CHECK(GrpcCalls::check_untyped(options).has_value());
  CHECK(error_of(options).starts_with("--proto: "));
  options.metadata = {"no colon"};
  REQUIRE_FALSE(GrpcCalls::check_untyped(options).has_value());
  CHECK(GrpcCalls::check_untyped(options).error().starts_with("--metadata: "));
  options.metadata = {};
  options.method = "Take";
  CHECK(GrpcCalls::check_untyped(options).error().starts_with("--method: "));
  options.method = "demo.v1.Quota/Take";
  options.denied_code = "EXHAUSTED";
  CHECK(GrpcCalls::check_untyped(options).error().starts_with("--denied-code: "));
}
