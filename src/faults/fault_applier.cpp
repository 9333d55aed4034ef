#include "faults/fault_applier.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "engine/interrupt.hpp"
#include "process/child_process.hpp"
#include "redis/cluster_slots.hpp"

namespace rlcheck::faults {
namespace {

using Argv = std::vector<std::string_view>;

// How long a replica may take to serve as master after CLUSTER FAILOVER.
constexpr auto k_failover_limit = std::chrono::seconds(10);
// How long a shell@ command may run before it is stopped and the fault counts as failed.
constexpr auto k_shell_limit = std::chrono::seconds(30);
constexpr auto k_poll = std::chrono::milliseconds(20);

std::string command_text(const Argv& argv) {
  std::string text;
  for (std::string_view arg : argv)
    text += fmt::format("{}{}", text.empty() ? "" : " ", arg);
  return text;
}

std::string text_of(const redisReply* reply) {
  if (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS)
    return {};
  return std::string(reply->str, reply->len);
}

redis::Endpoint endpoint_at(const redis::Endpoint& like, const redis::NodeAddress& node) {
  redis::Endpoint endpoint = like;
  endpoint.socket_path.clear();
  endpoint.host = node.host;
  endpoint.port = node.port;
  return endpoint;
}

// One command on a fresh connection to `endpoint`; an error reply is an error.
std::expected<redis::ReplyPtr, std::string> call_once(const redis::Endpoint& endpoint,
                                                      config::Nanos timeout, const Argv& argv) {
  auto client = redis::SyncClient::connect(endpoint, timeout);
  if (!client)
    return std::unexpected(client.error());
  auto reply = client->call(argv);
  if (!reply)
    return std::unexpected(reply.error());
  if (redis::is_error(reply->get())) {
    return std::unexpected(fmt::format("{} refused {}: {}", endpoint.display(), command_text(argv),
                                       redis::describe_reply(reply->get())));
  }
  return reply;
}

// The replicas a master lists in its ROLE reply ("master", offset, [[host, port, offset]...]).
std::expected<std::vector<redis::NodeAddress>, std::string> replicas_of(
    const redis::Endpoint& master, config::Nanos timeout) {
  auto role = call_once(master, timeout, {"ROLE"});
  if (!role)
    return std::unexpected(role.error());
  const redisReply* reply = role->get();
  std::vector<redis::NodeAddress> replicas;
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 ||
      reply->element[2]->type != REDIS_REPLY_ARRAY)
    return replicas;
  const redisReply* list = reply->element[2];
  for (size_t i = 0; i < list->elements; ++i) {
    const redisReply* entry = list->element[i];
    if (entry->type != REDIS_REPLY_ARRAY || entry->elements < 2)
      continue;
    redis::NodeAddress node;
    node.host = text_of(entry->element[0]);
    node.port = std::atoi(text_of(entry->element[1]).c_str());
    if (!node.host.empty() && node.port > 0)
      replicas.push_back(std::move(node));
  }
  return replicas;
}

bool has_kind(const std::vector<config::FaultSpec>& faults, config::FaultKind kind) {
  for (const config::FaultSpec& fault : faults) {
    if (fault.kind == kind)
      return true;
  }
  return false;
}

const config::FaultSpec& first_of(const std::vector<config::FaultSpec>& faults,
                                  config::FaultKind kind) {
  for (const config::FaultSpec& fault : faults) {
    if (fault.kind == kind)
      return fault;
  }
  return faults.front();
}

// The slot map as `endpoint` reports it; nullopt for a standalone server.
std::expected<std::optional<redis::SlotMap>, std::string> slot_map_of(
    const redis::Endpoint& endpoint, config::Nanos timeout) {
  auto client = redis::SyncClient::connect(endpoint, timeout);
  if (!client)
    return std::unexpected(client.error());
  return client->discover_cluster();
}

}  // namespace

std::optional<std::string> restart_refusal(const FaultedRedis& target,
                                           const std::vector<config::FaultSpec>& faults) {
  if (target.embedded != nullptr || !has_kind(faults, config::FaultKind::restart))
    return std::nullopt;
  return fmt::format(
      "--fault: {} restarts only the private redis-server rlcheck starts, but the test uses {} "
      "($REDIS_URL, or a server on 127.0.0.1:6379); unset REDIS_URL and free port 6379, or "
      "drop {}",
      first_of(faults, config::FaultKind::restart).text, target.endpoint.display(),
      first_of(faults, config::FaultKind::restart).text);
}

std::expected<void, std::string> check_failover_support(
    const FaultedRedis& target, const std::vector<config::FaultSpec>& faults) {
  if (!has_kind(faults, config::FaultKind::failover))
    return {};
  const std::string& spec = first_of(faults, config::FaultKind::failover).text;
  auto map = slot_map_of(target.endpoint, target.timeout);
  if (!map)
    return std::unexpected(fmt::format("--fault {}: {}", spec, map.error()));
  if (!*map) {
    return std::unexpected(
        fmt::format("--fault {}: needs a Redis Cluster with replicas; {} is not a cluster", spec,
                    target.endpoint.display()));
  }
  for (const redis::NodeAddress& master : (*map)->masters()) {
    auto replicas = replicas_of(endpoint_at(target.endpoint, master), target.timeout);
    if (!replicas)
      return std::unexpected(fmt::format("--fault {}: {}", spec, replicas.error()));
    if (replicas->empty()) {
      return std::unexpected(
          fmt::format("--fault {}: master {} has no replica to fail over to", spec, master.name()));
    }
  }
  return {};
}

FaultApplier::FaultApplier(FaultedRedis target) : target_(std::move(target)) {}

std::expected<redis::ReplyPtr, std::string> FaultApplier::call_seed(const Argv& argv) {
  if (seed_) {
    auto reply = seed_->call(argv);
    if (reply)
      return reply;
  }
  auto fresh = redis::SyncClient::connect(target_.endpoint, target_.timeout);
  if (!fresh)
    return std::unexpected(fresh.error());
  if (auto slots = fresh->discover_cluster(); !slots)
    return std::unexpected(slots.error());
  seed_.emplace(std::move(*fresh));
  return seed_->call(argv);
}

std::expected<std::vector<redis::Endpoint>, std::string> FaultApplier::masters() {
  auto map = slot_map_of(target_.endpoint, target_.timeout);
  if (!map)
    return std::unexpected(map.error());
  if (!*map)
    return std::vector<redis::Endpoint>{target_.endpoint};
  std::vector<redis::Endpoint> endpoints;
  for (const redis::NodeAddress& master : (*map)->masters())
    endpoints.push_back(endpoint_at(target_.endpoint, master));
  return endpoints;
}

std::expected<void, std::string> FaultApplier::on_every_master(const Argv& argv) {
  auto endpoints = masters();
  if (!endpoints)
    return std::unexpected(endpoints.error());
  for (const redis::Endpoint& endpoint : *endpoints) {
    if (auto reply = call_once(endpoint, target_.timeout, argv); !reply)
      return std::unexpected(reply.error());
  }
  return {};
}

std::expected<void, std::string> FaultApplier::failover(std::string_view key) {
  auto map = slot_map_of(target_.endpoint, target_.timeout);
  if (!map)
    return std::unexpected(map.error());
  if (!*map || (*map)->masters().empty())
    return std::unexpected(fmt::format("{} is not a cluster", target_.endpoint.display()));
  const auto master = key.empty() ? std::optional((*map)->masters().front())
                                  : (*map)->master_of(redis::key_slot(key));
  if (!master)
    return std::unexpected(fmt::format("no master serves the slot of {}", key));
  auto replicas = replicas_of(endpoint_at(target_.endpoint, *master), target_.timeout);
  if (!replicas)
    return std::unexpected(replicas.error());
  if (replicas->empty())
    return std::unexpected(fmt::format("master {} has no replica", master->name()));
  const redis::Endpoint replica = endpoint_at(target_.endpoint, replicas->front());
  if (auto reply = call_once(replica, target_.timeout, {"CLUSTER", "FAILOVER"}); !reply)
    return std::unexpected(reply.error());

  const auto deadline = std::chrono::steady_clock::now() + k_failover_limit;
  while (std::chrono::steady_clock::now() < deadline && !engine::interrupted()) {
    auto role = call_once(replica, target_.timeout, {"ROLE"});
    if (role && (*role)->type == REDIS_REPLY_ARRAY && (*role)->elements > 0 &&
        text_of((*role)->element[0]) == "master")
      return {};
    std::this_thread::sleep_for(k_poll);
  }
  return std::unexpected(fmt::format("replica {} did not take over from {} within {}s",
                                     replicas->front().name(), master->name(),
                                     k_failover_limit.count()));
}

std::expected<void, std::string> FaultApplier::run_shell(const std::string& command) {
  auto child = process::ChildProcess::spawn({"/bin/sh", "-c", command},
                                            process::ChildProcess::Stderr::inherit);
  if (!child)
    return std::unexpected(child.error());
  const auto deadline = std::chrono::steady_clock::now() + k_shell_limit;
  while (std::chrono::steady_clock::now() < deadline && !engine::interrupted()) {
    if (const auto status = child->wait_for(k_poll)) {
      if (*status == 0)
        return {};
      return std::unexpected(fmt::format("'{}' exited with status {}", command, *status));
    }
  }
  child->stop();
  return std::unexpected(
      engine::interrupted()
          ? fmt::format("'{}' was stopped: interrupted", command)
          : fmt::format("'{}' did not finish within {}s", command, k_shell_limit.count()));
}

std::expected<void, std::string> FaultApplier::apply(const config::FaultSpec& fault,
                                                     std::string_view failover_key) {
  using config::FaultKind;
  switch (fault.kind) {
    case FaultKind::pause: {
      const std::string ms = std::to_string(config::to_milliseconds(fault.duration));
      return on_every_master({"CLIENT", "PAUSE", ms, "ALL"});
    }
    case FaultKind::kill_clients:
      return on_every_master({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
    case FaultKind::flush_scripts: {
      // SyncClient sends SCRIPT to every master of a cluster.
      auto reply = call_seed({"SCRIPT", "FLUSH"});
      if (!reply)
        return std::unexpected(reply.error());
      if (redis::is_error(reply->get())) {
        return std::unexpected(fmt::format("{} refused SCRIPT FLUSH: {}",
                                           target_.endpoint.display(),
                                           redis::describe_reply(reply->get())));
      }
      return {};
    }
    case FaultKind::restart:
      if (target_.embedded == nullptr)
        return std::unexpected("only the private redis-server rlcheck starts can be restarted");
      seed_.reset();
      return target_.embedded->restart();
    case FaultKind::failover:
      return failover(failover_key);
    case FaultKind::shell:
      return run_shell(fault.command);
  }
  return std::unexpected("unknown fault");
}

}  // namespace rlcheck::faults
