#pragma once
// The calls of one gRPC run as every client reads them: the method's path and message types
// (loaded from --proto files, else from the files the service described by server reflection),
// the request's JSON template, metadata, and the rules that read a call's end. Made once from
// GrpcOptions, checked there (errors name the flag); read-only and shared by every client of
// the run.

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/placeholder_template.hpp"
#include "targets/grpc/call_decision.hpp"
#include "targets/grpc/grpc_options.hpp"

namespace google::protobuf {
class Descriptor;
class Message;
namespace util {
class TypeResolver;
}
}  // namespace google::protobuf

namespace rlcheck::grpc_target {

class MessageTypes;

class GrpcCalls {
 public:
  // Loads the types and checks every option against them; an error is one line naming the
  // flag ("--method: ...", "--proto: rls.proto:12:3: ...", "--data: ...").
  static std::expected<std::shared_ptr<const GrpcCalls>, std::string> make(
      const GrpcOptions& options);
  // Without --proto, before the service described the types: checks what does not need them
  // (the method's form, the placeholders, --metadata, --denied-code, the TLS files).
  static std::expected<void, std::string> check_untyped(const GrpcOptions& options);
  ~GrpcCalls();
  GrpcCalls& operator=(const GrpcCalls&) = delete;

  // The same calls for one run: its {run}, its clients' seed and its --timeout (a probe's send
  // caps it). The types, loaded once by make(), are shared.
  std::shared_ptr<const GrpcCalls> for_run(int run, uint64_t seed,
                                           std::chrono::nanoseconds timeout) const;

  const GrpcOptions& options() const { return options_; }
  // "/pkg.Service/Method", as the call is made on the wire.
  const std::string& method_path() const { return method_path_; }
  const DecisionRules& rules() const { return rules_; }
  // The PEM texts of --tls-ca, --tls-cert and --tls-key (read once), with grpcs://.
  struct TlsPem {
    std::string roots, cert_chain, private_key;
  };
  const TlsPem& tls_pem() const { return tls_pem_; }
  // Those files read; an error naming the flag of one that cannot be read.
  static std::expected<TlsPem, std::string> read_tls_pem(const GrpcOptions& options);
  // "pkg.Service/Method", "/pkg.Service/Method" or "pkg.Service.Method": (service, method).
  static std::optional<std::pair<std::string, std::string>> split_method(std::string_view text);
  // Whether a response is read past its status (--denied-when, --hint-field).
  bool reads_response() const { return !rules_.denied_when.empty() || rules_.hint_field; }

  // A fresh, empty message of the method's input or output type (a client reuses its
  // response; requests are encoded without one).
  std::unique_ptr<google::protobuf::Message> new_request() const;
  std::unique_ptr<google::protobuf::Message> new_response() const;

  // The request's bytes for `context`: --data expanded into `json` and read as the method's
  // input type straight into its binary form in `out`. False with `error` set when the JSON
  // does not fit the type. A --data without placeholders is encoded once, here.
  bool encode_request(const engine::PlaceholderContext& context, std::string& json,
                      std::string& out, std::string& error) const;
  // --metadata, expanded: (key, value) pairs.
  void expand_metadata(const engine::PlaceholderContext& context,
                       std::vector<std::pair<std::string, std::string>>& out) const;

 private:
  GrpcCalls() = default;
  GrpcCalls(const GrpcCalls&) = default;  // for_run
  static std::expected<std::shared_ptr<GrpcCalls>, std::string> build(const GrpcOptions& options,
                                                                      bool typed);

  GrpcOptions options_;
  std::shared_ptr<MessageTypes> types_;
  const google::protobuf::Descriptor* input_ = nullptr;
  const google::protobuf::Descriptor* output_ = nullptr;
  std::string method_path_;
  // Reads the JSON by the input type's URL; shared by every client (it only reads the pool).
  std::shared_ptr<google::protobuf::util::TypeResolver> resolver_;
  std::string input_url_;
  engine::PlaceholderTemplate data_;
  std::optional<std::string> constant_request_;  // the bytes, when --data has no placeholder
  std::vector<std::pair<std::string, engine::PlaceholderTemplate>> metadata_;
  DecisionRules rules_;
  TlsPem tls_pem_;
};

}  // namespace rlcheck::grpc_target
