#include "redis/connect_target.hpp"

#include <fmt/format.h>

#include "process/child_process.hpp"

namespace rlcheck::redis {
namespace {

constexpr auto k_default_probe_timeout = std::chrono::milliseconds(500);

std::expected<ConnectedTarget, std::string> connect_to(const Endpoint& endpoint,
                                                       config::Nanos timeout) {
  auto client = SyncClient::connect(endpoint, timeout);
  if (!client)
    return std::unexpected(client.error());
  ConnectedTarget target;
  target.endpoint = endpoint;
  target.topology = standalone_topology(endpoint);
  target.control.emplace(std::move(*client));
  return target;
}

}  // namespace

std::expected<ConnectedTarget, std::string> connect_target(
    const TargetChoice& choice, const std::function<void(const std::string&)>& notice) {
  if (choice.url || choice.env_url) {
    const std::string& url = choice.url ? *choice.url : *choice.env_url;
    auto endpoint = parse_endpoint(url);
    if (!endpoint) {
      return std::unexpected(
          fmt::format("{}: {}", choice.url ? "--redis" : "REDIS_URL", endpoint.error()));
    }
    return connect_to(*endpoint, choice.timeout);
  }

  Endpoint default_endpoint;
  default_endpoint.host = "127.0.0.1";
  default_endpoint.port = 6379;
  auto target = connect_to(default_endpoint,
                           std::min<config::Nanos>(choice.timeout, k_default_probe_timeout));
  if (target)
    return target;

  auto server_path = process::find_on_path("redis-server");
  if (!server_path) {
    return std::unexpected(
        fmt::format("{}, and redis-server is not on PATH to start a private one; pass --redis URL",
                    target.error()));
  }
  auto server = EmbeddedServer::start(*server_path);
  if (!server) {
    return std::unexpected(fmt::format("{}; starting a private redis-server failed: {}",
                                       target.error(), server.error()));
  }
  auto embedded = connect_to((*server)->endpoint(), choice.timeout);
  if (!embedded)
    return std::unexpected(embedded.error());
  notice(
      fmt::format("nothing answers on 127.0.0.1:6379; started a private redis-server on {} "
                  "(stopped at exit)",
                  embedded->endpoint.display()));
  embedded->embedded = std::move(*server);
  return embedded;
}

}  // namespace rlcheck::redis
