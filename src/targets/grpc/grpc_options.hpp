#pragma once
// What `rlcheck grpc HOST:PORT` is told about its target: the method, where its message types
// come from, the request's JSON, and how a call's end reads as a decision. Plain values with
// their defaults; GrpcCalls::make (grpc_calls.hpp) checks them and names the flag at fault.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "engine/placeholder_template.hpp"

namespace rlcheck::grpc_target {

struct GrpcOptions {
  std::string address;  // HOST:PORT (grpc:// or grpcs:// stripped by the caller)
  // grpcs://: HTTP/2 over TLS, the server verified against tls.ca_file (else the system's
  // roots), tls.sni the name verified; a client certificate from tls.cert_file and key_file.
  // tls.insecure is refused: gRPC's C++ library verifies every server.
  bool use_tls = false;
  config::TlsConfig tls;
  // --method: "pkg.Service/Method" (a leading '/' and "pkg.Service.Method" read the same).
  std::string method;
  std::vector<std::string> proto_files;   // --proto: the files that define the method's types
  std::vector<std::string> import_paths;  // --import-path: where their imports are looked up
  // Without --proto: the files the service described by server reflection (serialized
  // google.protobuf.FileDescriptorProtos, targets/grpc/server_reflection), asked before the test.
  std::vector<std::string> described_files;
  // --data: the request as JSON (proto3's JSON mapping), with the placeholders of an HTTP body
  // ({id}, {seq}, {cost}, {now_ms}, ...); braces that name no placeholder are JSON.
  std::string data = "{}";
  // --metadata: "key: value" pairs sent with every call, placeholders expanded.
  std::vector<std::string> metadata;
  // --denied-code: the status a denial ends with, by name (RESOURCE_EXHAUSTED) or number (8).
  std::string denied_code = "RESOURCE_EXHAUSTED";
  // --denied-when FIELD=VALUE: an OK response whose field has this value is a denial (Envoy's
  // rate limit service: overall_code=OVER_LIMIT); several: any of them.
  std::vector<std::string> denied_when;
  // --hint-field PATH: the retry hint in a response (statuses.0.duration_until_reset): a
  // google.protobuf.Duration, or a number of seconds. Empty: from the status only (RetryInfo,
  // retry-after metadata).
  std::string hint_field;
  bool require_hint = true;  // a denial must say when to retry (as http's Retry-After)
  // Channels (HTTP/2 connections) per worker loop; client i of a loop calls on channel i mod
  // channels. Each carries many calls at once.
  int channels = 1;
  std::chrono::nanoseconds timeout = std::chrono::seconds(5);  // --timeout: a call's bound
  uint64_t seed = 0;                                           // --seed: {uuid}
  // {limit}, {window_ms}, {run}, {group}: the run's; seq, identity, cost and clock per call.
  engine::PlaceholderContext placeholders;
};

}  // namespace rlcheck::grpc_target
