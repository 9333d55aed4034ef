#pragma once
// The gRPC test servers (tests/fixtures/grpc), Go programs the build makes offline from Debian's
// Go packages: a service behind go-grpc-middleware's rate-limit interceptor on an x/time/rate
// token bucket (token_bucket_server), and Envoy's rate limit service over Redis
// (rls_redis_server, counting atomically or GET-then-INCR); either offers gRPC's server
// reflection with -reflection.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/real_server.hpp"

namespace rlcheck::testing {

inline const std::string k_grpc_protos = std::string(RLCHECK_FIXTURES) + "/grpc";

inline std::string go_server_program(const std::string& name) {
  const std::string path = std::string(RLCHECK_GRPC_SERVERS) + "/" + name;
  REQUIRE_MESSAGE(std::filesystem::exists(path),
                  path << " is missing: the build makes it with go and protoc "
                          "(scripts/install-deps.sh installs golang-go and the Go packages)");
  return path;
}

// One of the Go servers on a free loopback port, stopped at the end of the test.
class GoServer {
 public:
  GoServer(const std::string& name, std::vector<std::string> flags)
      : scratch_("rlcheck-" + name),
        port_(free_loopback_port()),
        server_(argv(name, flags), scratch_.path(), scratch_.path() + "/server.log", port_) {}
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return server_.log(); }

 private:
  std::vector<std::string> argv(const std::string& name, std::vector<std::string> flags) {
    flags.insert(flags.begin(), {go_server_program(name), "-port", std::to_string(port_)});
    return flags;
  }

  ScratchDir scratch_;
  int port_;
  RealServer server_;
};

}  // namespace rlcheck::testing
