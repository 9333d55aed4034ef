#include "provision/connect_target.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include "process/child_process.hpp"

namespace rlcheck::provision {
namespace {

constexpr auto k_default_probe_timeout = std::chrono::milliseconds(500);

std::expected<ConnectedTarget, std::string> connect_to(const redis::Endpoint& endpoint,
                                                       config::Nanos timeout) {
  auto client = redis::SyncClient::connect(endpoint, timeout);
  if (!client)
    return std::unexpected(client.error());
  ConnectedTarget target;
  target.endpoint = endpoint;
  target.topology = redis::standalone_topology(endpoint);
  target.control.emplace(std::move(*client));
  return target;
}

// Whether the server is a Redis Cluster; --cluster insists that it is.
std::expected<ConnectedTarget, std::string> discover_topology(ConnectedTarget target,
                                                              const TargetChoice& choice) {
  auto slots = target.control->discover_cluster();
  if (!slots)
    return std::unexpected(slots.error());
  if (!*slots && choice.require_cluster) {
    return std::unexpected(fmt::format(
        "--cluster: {} is not a Redis Cluster (CLUSTER SLOTS was refused or cluster support is "
        "disabled)",
        target.endpoint.display()));
  }
  if (*slots && (!(*slots)->covered() || (*slots)->masters().empty())) {
    return std::unexpected(fmt::format(
        "{} is a Redis Cluster whose slots are not all served (CLUSTER SLOTS): it cannot take "
        "every key",
        target.endpoint.display()));
  }
  if (*slots) {
    target.topology.kind = redis::Topology::Kind::cluster;
    target.topology.masters = static_cast<int>((*slots)->masters().size());
  }
  return target;
}

std::expected<ConnectedTarget, std::string> start_embedded_cluster(
    const TargetChoice& choice, const std::function<void(const std::string&)>& notice) {
  auto server_path = process::find_on_path("redis-server");
  if (!server_path)
    return std::unexpected("--embedded-cluster: redis-server is not on PATH");
  auto cluster =
      EmbeddedCluster::start(*server_path, choice.embedded_cluster, choice.embedded_replicas);
  if (!cluster) {
    return std::unexpected(
        fmt::format("--embedded-cluster: starting a private cluster failed: {}", cluster.error()));
  }
  auto target = connect_to((*cluster)->seed_endpoint(), choice.timeout);
  if (!target)
    return std::unexpected(target.error());
  std::vector<std::string> nodes;
  for (const redis::Endpoint& node : (*cluster)->endpoints())
    nodes.push_back(fmt::format("{}", node.port));
  notice(fmt::format(
      "started a private {}-master Redis Cluster{} on 127.0.0.1 ports {} (stopped at exit)",
      choice.embedded_cluster,
      choice.embedded_replicas > 0
          ? fmt::format(" with {} replica{} each", choice.embedded_replicas,
                        choice.embedded_replicas == 1 ? "" : "s")
          : "",
      fmt::join(nodes, ", ")));
  target->embedded_cluster = std::move(*cluster);
  return target;
}

// The private redis-server. `tried`: why the default 127.0.0.1:6379 was not used (empty with
// --redis embedded).
std::expected<ConnectedTarget, std::string> start_embedded(
    const TargetChoice& choice, const std::function<void(const std::string&)>& notice,
    const std::string& tried) {
  const std::string before = tried.empty() ? "--redis embedded" : tried;
  auto server_path = process::find_on_path("redis-server");
  if (!server_path) {
    return std::unexpected(fmt::format(
        "{}, and redis-server is not on PATH to start a private one; pass --redis URL", before));
  }
  auto server = EmbeddedServer::start(*server_path);
  if (!server) {
    return std::unexpected(
        fmt::format("{}; starting a private redis-server failed: {}", before, server.error()));
  }
  auto embedded = connect_to((*server)->endpoint(), choice.timeout);
  if (!embedded)
    return std::unexpected(embedded.error());
  notice(fmt::format("{}started a private redis-server on {} (stopped at exit)",
                     tried.empty() ? "" : "nothing answers on 127.0.0.1:6379; ",
                     embedded->endpoint.display()));
  embedded->embedded = std::move(*server);
  return embedded;
}

std::expected<ConnectedTarget, std::string> connect_standalone_or_url(
    const TargetChoice& choice, const std::function<void(const std::string&)>& notice) {
  if (choice.embedded_cluster > 0)
    return start_embedded_cluster(choice, notice);
  if (choice.url && *choice.url == config::k_embedded_url)
    return start_embedded(choice, notice, "");
  if (choice.url || choice.env_url) {
    const std::string& url = choice.url ? *choice.url : *choice.env_url;
    auto endpoint = redis::parse_endpoint(url);
    if (!endpoint) {
      return std::unexpected(
          fmt::format("{}: {}", choice.url ? "--redis" : "REDIS_URL", endpoint.error()));
    }
    if (endpoint->tls)
      endpoint->tls_options = choice.tls;
    return connect_to(*endpoint, choice.timeout);
  }

  redis::Endpoint default_endpoint;
  default_endpoint.host = "127.0.0.1";
  default_endpoint.port = 6379;
  auto target = connect_to(default_endpoint,
                           std::min<config::Nanos>(choice.timeout, k_default_probe_timeout));
  if (target)
    return target;

  return start_embedded(choice, notice, target.error());
}

}  // namespace

std::expected<ConnectedTarget, std::string> connect_target(
    const TargetChoice& choice, const std::function<void(const std::string&)>& notice) {
  auto target = connect_standalone_or_url(choice, notice);
  if (!target)
    return target;
  return discover_topology(std::move(*target), choice);
}

}  // namespace rlcheck::provision
