#include "provision/embedded_cluster.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "provision/embedded_server.hpp"
#include "redis/cluster_slots.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::provision {
namespace {

constexpr auto k_node_start_limit = std::chrono::seconds(5);
constexpr auto k_form_limit = std::chrono::seconds(15);
constexpr auto k_poll = std::chrono::milliseconds(10);
constexpr auto k_command_timeout = std::chrono::seconds(2);
constexpr int k_port_attempts = 5;
// A node that misses pings for this long is taken for failing (and with no replicas, the
// cluster goes down with it), so it must exceed any stall of a busy machine. It also sets how
// long a node that started alone waits before it serves (at least the fixed 2 s every master
// waits after start), so above 2 s it would slow every start.
constexpr const char* k_node_timeout_ms = "2000";

// A loopback port nobody listens on right now (the kernel's pick for port 0). Another process
// may take it before redis-server binds it; start_node() retries then.
std::expected<int, std::string> free_loopback_port(int avoid) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return std::unexpected("cannot find a free port: no socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                       getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
    close(fd);
    if (!bound)
      return std::unexpected("cannot find a free port on 127.0.0.1");
    const int port = ntohs(address.sin_port);
    if (port != avoid)
      return port;
  }
  return std::unexpected("cannot find a free port on 127.0.0.1");
}

redis::Endpoint endpoint_of(int port) {
  redis::Endpoint endpoint;
  endpoint.host = "127.0.0.1";
  endpoint.port = port;
  return endpoint;
}

// Runs one command that must succeed (an error reply is an error here).
std::expected<redis::ReplyPtr, std::string> must(redis::SyncClient& client, int port,
                                                 std::initializer_list<std::string_view> argv) {
  auto reply = client.call(argv);
  if (!reply)
    return std::unexpected(reply.error());
  if (redis::is_error(reply->get())) {
    return std::unexpected(fmt::format("127.0.0.1:{} refused {} {}: {}", port, *argv.begin(),
                                       *(argv.begin() + 1), redis::describe_reply(reply->get())));
  }
  return reply;
}

// Why node `port` does not yet see the cluster formed, or nothing when it does.
std::optional<std::string> not_ready(redis::SyncClient& client, int port, int masters) {
  auto info = client.call({"CLUSTER", "INFO"});
  if (!info)
    return info.error();
  if ((*info)->type != REDIS_REPLY_STRING)
    return fmt::format("127.0.0.1:{} answered CLUSTER INFO with {}", port,
                       redis::describe_reply(info->get()));
  const std::string_view text((*info)->str, (*info)->len);
  if (text.find("cluster_state:ok") == std::string_view::npos)
    return fmt::format("127.0.0.1:{} does not say cluster_state:ok", port);

  auto slots = client.call({"CLUSTER", "SLOTS"});
  if (!slots)
    return slots.error();
  auto map = redis::SlotMap::from_cluster_slots(**slots, "127.0.0.1");
  if (!map)
    return fmt::format("127.0.0.1:{}: {}", port, map.error());
  if (!map->covered() || static_cast<int>(map->masters().size()) != masters) {
    return fmt::format("127.0.0.1:{} sees {} of {} masters", port, map->masters().size(), masters);
  }
  return std::nullopt;
}

}  // namespace

std::expected<std::unique_ptr<EmbeddedCluster>, std::string> EmbeddedCluster::start(
    const std::string& server_path, int masters) {
  return start(server_path, masters, 0);
}

std::expected<std::unique_ptr<EmbeddedCluster>, std::string> EmbeddedCluster::start(
    const std::string& server_path, int masters, int replicas_per_master) {
  if (masters < 1)
    return std::unexpected(fmt::format("a cluster needs at least 1 master, not {}", masters));
  if (replicas_per_master < 0) {
    return std::unexpected(fmt::format("a master cannot have {} replicas", replicas_per_master));
  }
  std::string pattern =
      (std::filesystem::temp_directory_path() / "rlcheck-cluster-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return std::unexpected(fmt::format("cannot create a directory for redis-server in {}",
                                       std::filesystem::temp_directory_path().string()));
  }
  // From here the destructor cleans up whatever was started, on every return.
  std::unique_ptr<EmbeddedCluster> cluster(
      new EmbeddedCluster(std::filesystem::path(pattern), masters));
  const int nodes = masters * (1 + replicas_per_master);
  for (int i = 0; i < nodes; ++i) {
    auto node = start_node(server_path, cluster->directory_, i);
    if (!node)
      return std::unexpected(node.error());
    cluster->nodes_.push_back(std::move(*node));
  }
  if (auto formed = cluster->form(); !formed)
    return std::unexpected(formed.error());
  if (replicas_per_master > 0) {
    if (auto attached = cluster->attach_replicas(replicas_per_master); !attached)
      return std::unexpected(attached.error());
  }
  return cluster;
}

std::expected<EmbeddedCluster::Node, std::string> EmbeddedCluster::start_node(
    const std::string& server_path, const std::filesystem::path& directory, int index) {
  const std::filesystem::path node_directory = directory / fmt::format("node-{}", index);
  std::error_code error;
  std::filesystem::create_directory(node_directory, error);
  if (error) {
    return std::unexpected(
        fmt::format("cannot create {}: {}", node_directory.string(), error.message()));
  }
  const std::filesystem::path log = node_directory / "redis.log";
  std::string last_exit;
  for (int attempt = 0; attempt < k_port_attempts; ++attempt) {
    auto port = free_loopback_port(0);
    if (!port)
      return std::unexpected(port.error());
    auto bus_port = free_loopback_port(*port);
    if (!bus_port)
      return std::unexpected(bus_port.error());
    std::filesystem::remove(log, error);
    auto child = process::ChildProcess::spawn({server_path,
                                               "--port",
                                               std::to_string(*port),
                                               "--cluster-enabled",
                                               "yes",
                                               "--cluster-port",
                                               std::to_string(*bus_port),
                                               "--cluster-config-file",
                                               (node_directory / "nodes.conf").string(),
                                               "--cluster-node-timeout",
                                               k_node_timeout_ms,
                                               "--bind",
                                               "127.0.0.1",
                                               "--dir",
                                               node_directory.string(),
                                               "--save",
                                               "",
                                               "--appendonly",
                                               "no",
                                               "--logfile",
                                               log.string()});
    if (!child)
      return std::unexpected(child.error());
    Node node{*port, *bus_port, log, std::move(*child)};

    const auto deadline = std::chrono::steady_clock::now() + k_node_start_limit;
    std::string last_error;
    while (node.child.running() && std::chrono::steady_clock::now() < deadline) {
      auto client =
          redis::SyncClient::connect(endpoint_of(node.port), std::chrono::milliseconds(500));
      if (client)
        return node;
      last_error = client.error();
      std::this_thread::sleep_for(k_poll);
    }
    if (node.child.running()) {
      return std::unexpected(fmt::format("{} did not answer within {}s: {}", server_path,
                                         k_node_start_limit.count(), last_error));
    }
    // It exited. A port taken between our pick and its bind ("Failed listening on port P
    // (TCP), aborting.", or "(cluster)" for the bus port) is worth another pick; nothing else is.
    last_exit = last_log_line(log);
    if (last_exit.find("Failed listening on port") == std::string::npos)
      break;
  }
  return std::unexpected(fmt::format("{} exited: {}", server_path, last_exit));
}

std::expected<void, std::string> EmbeddedCluster::form() const {
  const int masters = masters_;
  std::vector<redis::SyncClient> clients;
  for (const Node& node : nodes_) {
    auto client = redis::SyncClient::connect(endpoint_of(node.port), k_command_timeout);
    if (!client)
      return std::unexpected(client.error());
    clients.push_back(std::move(*client));
  }
  // Each node gets its own configuration epoch before it meets the others (as redis-cli
  // --cluster create does), so no epoch collision has to be resolved while the cluster forms.
  for (int i = 0; i < masters; ++i) {
    const int first = i * redis::k_cluster_slots / masters;
    const int last = (i + 1) * redis::k_cluster_slots / masters - 1;
    const int port = nodes_[static_cast<size_t>(i)].port;
    auto& client = clients[static_cast<size_t>(i)];
    if (auto r = must(client, port,
                      {"CLUSTER", "ADDSLOTSRANGE", std::to_string(first), std::to_string(last)});
        !r)
      return std::unexpected(r.error());
    if (auto r = must(client, port, {"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)}); !r)
      return std::unexpected(r.error());
  }
  for (size_t i = 1; i < nodes_.size(); ++i) {
    if (auto r = must(clients[0], nodes_[0].port,
                      {"CLUSTER", "MEET", "127.0.0.1", std::to_string(nodes_[i].port),
                       std::to_string(nodes_[i].bus_port)});
        !r)
      return std::unexpected(r.error());
  }

  const auto deadline = std::chrono::steady_clock::now() + k_form_limit;
  while (true) {
    std::optional<std::string> waiting;
    for (size_t i = 0; i < nodes_.size() && !waiting; ++i)
      waiting = not_ready(clients[i], nodes_[i].port, masters);
    if (!waiting)
      return {};
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::unexpected(
          fmt::format("the cluster did not form within {}s: {}", k_form_limit.count(), *waiting));
    }
    std::this_thread::sleep_for(k_poll);
  }
}

std::expected<void, std::string> EmbeddedCluster::attach_replicas(int replicas_per_master) const {
  std::vector<std::string> master_ids;
  for (int i = 0; i < masters_; ++i) {
    const int port = nodes_[static_cast<size_t>(i)].port;
    auto client = redis::SyncClient::connect(endpoint_of(port), k_command_timeout);
    if (!client)
      return std::unexpected(client.error());
    auto id = must(*client, port, {"CLUSTER", "MYID"});
    if (!id)
      return std::unexpected(id.error());
    master_ids.emplace_back((*id)->str, (*id)->len);
  }
  std::vector<redis::SyncClient> replicas;
  for (size_t i = static_cast<size_t>(masters_); i < nodes_.size(); ++i) {
    const size_t master =
        (i - static_cast<size_t>(masters_)) / static_cast<size_t>(replicas_per_master);
    auto client = redis::SyncClient::connect(endpoint_of(nodes_[i].port), k_command_timeout);
    if (!client)
      return std::unexpected(client.error());
    if (auto r = must(*client, nodes_[i].port, {"CLUSTER", "REPLICATE", master_ids[master]}); !r)
      return std::unexpected(r.error());
    replicas.push_back(std::move(*client));
  }

  // Ready when every replica's link is up and every master counts its replicas as connected
  // (ROLE: "master", offset, [[host, port, offset]...]), so a failover can be coordinated.
  auto not_attached = [&]() -> std::optional<std::string> {
    for (size_t i = 0; i < replicas.size(); ++i) {
      auto info = replicas[i].call({"INFO", "replication"});
      if (!info)
        return info.error();
      if ((*info)->type != REDIS_REPLY_STRING ||
          std::string_view((*info)->str, (*info)->len).find("master_link_status:up") ==
              std::string_view::npos)
        return fmt::format("replica 127.0.0.1:{} is not in sync with its master",
                           nodes_[static_cast<size_t>(masters_) + i].port);
    }
    for (int i = 0; i < masters_; ++i) {
      const int port = nodes_[static_cast<size_t>(i)].port;
      auto client = redis::SyncClient::connect(endpoint_of(port), k_command_timeout);
      if (!client)
        return client.error();
      auto role = client->call({"ROLE"});
      if (!role)
        return role.error();
      const redisReply* reply = role->get();
      if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 ||
          reply->element[2]->type != REDIS_REPLY_ARRAY ||
          static_cast<int>(reply->element[2]->elements) < replicas_per_master)
        return fmt::format("master 127.0.0.1:{} does not list its replicas yet", port);
    }
    return std::nullopt;
  };
  const auto deadline = std::chrono::steady_clock::now() + k_form_limit;
  while (true) {
    const std::optional<std::string> waiting = not_attached();
    if (!waiting)
      return {};
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::unexpected(
          fmt::format("the replicas did not sync within {}s: {}", k_form_limit.count(), *waiting));
    }
    std::this_thread::sleep_for(k_poll);
  }
}

EmbeddedCluster::~EmbeddedCluster() {
  // All are asked to stop first, so their shutdowns overlap instead of queueing.
  for (Node& node : nodes_) {
    if (node.child.running())
      kill(node.child.pid(), SIGTERM);
  }
  for (Node& node : nodes_)
    node.child.stop();
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::vector<redis::Endpoint> EmbeddedCluster::endpoints() const {
  std::vector<redis::Endpoint> endpoints;
  for (int i = 0; i < masters_; ++i)
    endpoints.push_back(endpoint_of(nodes_[static_cast<size_t>(i)].port));
  return endpoints;
}

redis::Endpoint EmbeddedCluster::seed_endpoint() const {
  return endpoint_of(nodes_.front().port);
}

}  // namespace rlcheck::provision
