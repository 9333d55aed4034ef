#pragma once
// What `rlcheck grpc` (and probe or compare on grpc:// URLs) was told, checked: the calls, the
// targets' addresses, and what resets the service's state between runs. It rides in
// config::Config::kind_options, which only this folder reads.

#include <string>
#include <vector>

#include "config/config.hpp"
#include "targets/grpc/grpc_options.hpp"

namespace rlcheck::grpc_target {

struct GrpcConfig {
  GrpcOptions calls;              // every target's calls (address: each target's own)
  std::vector<std::string> urls;  // grpc:// or grpcs://HOST:PORT: one, or each --url
  config::Nanos between_runs{0};  // --between-runs
  std::string reset_cmd;          // --reset-cmd
};

// The grpc kind's configuration of `config` (filled by its command line).
const GrpcConfig& grpc_config(const config::Config& config);

// "grpc://HOST:PORT" or "grpcs://HOST:PORT" -> "HOST:PORT".
std::string address_of(const std::string& url);
// grpcs://: HTTP/2 over TLS.
bool uses_tls(const std::string& url);

}  // namespace rlcheck::grpc_target
