#pragma once
// Which Redis to use: --redis, else $REDIS_URL, else 127.0.0.1:6379, else a private
// redis-server started for this invocation. Never any other server unasked.

#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config/duration.hpp"
#include "redis/embedded_server.hpp"
#include "redis/endpoint.hpp"
#include "redis/sync_client.hpp"
#include "redis/topology.hpp"

namespace rlcheck::redis {

struct ConnectedTarget {
  Endpoint endpoint;
  std::unique_ptr<EmbeddedServer> embedded;  // set when rlcheck started its own server
  std::optional<SyncClient> control;         // for set-up and tear-down
  Topology topology;                         // standalone_topology(endpoint) until discovery
};

struct TargetChoice {
  std::optional<std::string> url;      // --redis
  std::optional<std::string> env_url;  // $REDIS_URL, when set and not empty
  config::Nanos timeout{std::chrono::seconds(5)};
};

// On failure, what was tried and why it failed (the caller exits 3). `notice` receives the
// one line saying a private server was started.
std::expected<ConnectedTarget, std::string> connect_target(
    const TargetChoice& choice, const std::function<void(const std::string&)>& notice);

}  // namespace rlcheck::redis
