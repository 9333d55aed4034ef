#pragma once
// Which Redis to use: --redis, else $REDIS_URL, else 127.0.0.1:6379, else a private
// redis-server started for this invocation. Never any other server unasked.

#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/duration.hpp"
#include "provision/embedded_cluster.hpp"
#include "provision/embedded_server.hpp"
#include "redis/endpoint.hpp"
#include "redis/sync_client.hpp"
#include "redis/topology.hpp"

namespace rlcheck::provision {

struct ConnectedTarget {
  redis::Endpoint endpoint;
  std::unique_ptr<EmbeddedServer> embedded;           // set when rlcheck started its own server
  std::unique_ptr<EmbeddedCluster> embedded_cluster;  // --embedded-cluster
  std::optional<redis::SyncClient> control;  // for set-up and tear-down; knows the slot map
  redis::Topology topology;                  // standalone_topology(endpoint) until discovery
};

struct TargetChoice {
  std::optional<std::string> url;      // --redis
  std::optional<std::string> env_url;  // $REDIS_URL, when set and not empty
  config::Nanos timeout{std::chrono::seconds(5)};
  // --tls-* and --insecure: copied into the endpoint when its URL is rediss://, used for
  // nothing else (the default and private servers are plain TCP and unix sockets).
  config::TlsConfig tls;
  bool require_cluster = false;  // --cluster: a server that is not a cluster is an error
  int embedded_cluster = 0;      // --embedded-cluster N: start a private N-master cluster
  int embedded_replicas = 0;     // replicas of each of its masters (--fault failover@)
};

// On failure, what was tried and why it failed (the caller exits 3). `notice` receives the
// one line saying a private server was started.
std::expected<ConnectedTarget, std::string> connect_target(
    const TargetChoice& choice, const std::function<void(const std::string&)>& notice);

}  // namespace rlcheck::provision
