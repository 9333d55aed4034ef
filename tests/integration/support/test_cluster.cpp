#include "support/test_cluster.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "process/child_process.hpp"

namespace rlcheck::testing {
namespace {

constexpr auto k_timeout = std::chrono::seconds(5);
constexpr int k_migrate_batch = 100;
constexpr const char* k_migrate_timeout_ms = "5000";

// Sends one command that must not fail; returns its reply.
redis::ReplyPtr must(redis::SyncClient& client, const std::vector<std::string_view>& argv) {
  auto reply = client.call(argv);
  if (!reply)
    throw std::runtime_error(reply.error());
  if (redis::is_error(reply->get())) {
    std::string command;
    for (std::string_view arg : argv)
      command += fmt::format("{}{}", command.empty() ? "" : " ", arg);
    throw std::runtime_error(
        fmt::format("{} refused: {}", command, redis::describe_reply(reply->get())));
  }
  return std::move(*reply);
}

std::string text_of(const redisReply* reply) {
  if (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS)
    throw std::runtime_error("expected a string reply, got " + redis::describe_reply(reply));
  return std::string(reply->str, reply->len);
}

std::string node_id(redis::SyncClient& client) {
  return text_of(must(client, {"CLUSTER", "MYID"}).get());
}

}  // namespace

TestCluster& TestCluster::shared() {
  static TestCluster cluster(0);
  return cluster;
}

TestCluster& TestCluster::shared_with_replicas() {
  static TestCluster cluster(1);
  return cluster;
}

TestCluster::TestCluster(int replicas_per_master) {
  auto server = process::find_on_path("redis-server");
  if (!server)
    throw std::runtime_error("redis-server is not on PATH");
  auto cluster = provision::EmbeddedCluster::start(*server, k_masters, replicas_per_master);
  if (!cluster)
    throw std::runtime_error("the test cluster did not start: " + cluster.error());
  cluster_ = std::move(*cluster);
}

redis::SlotMap TestCluster::slot_map() const {
  const redis::Endpoint seed = seed_endpoint();
  auto client = redis::SyncClient::connect(seed, k_timeout);
  if (!client)
    throw std::runtime_error(client.error());
  const redis::ReplyPtr reply = must(*client, {"CLUSTER", "SLOTS"});
  auto map = redis::SlotMap::from_cluster_slots(*reply, seed.host);
  if (!map)
    throw std::runtime_error(map.error());
  return std::move(*map);
}

redis::NodeAddress TestCluster::master_of(std::string_view key) const {
  auto master = slot_map().master_of(redis::key_slot(key));
  if (!master)
    throw std::runtime_error(fmt::format("no master serves the slot of {}", key));
  return *master;
}

redis::SyncClient TestCluster::connect(const redis::NodeAddress& node) const {
  redis::Endpoint endpoint;
  endpoint.host = node.host;
  endpoint.port = node.port;
  auto client = redis::SyncClient::connect(endpoint, k_timeout);
  if (!client)
    throw std::runtime_error(client.error());
  return std::move(*client);
}

redis::SyncClient TestCluster::connect_to_master_of(std::string_view key) const {
  return connect(master_of(key));
}

void TestCluster::migrate_slot(uint16_t slot, const redis::NodeAddress& to) const {
  const redis::SlotMap map = slot_map();
  const auto from = map.master_of(slot);
  if (!from)
    throw std::runtime_error(fmt::format("no master serves slot {}", slot));
  if (*from == to)
    return;
  redis::SyncClient source = connect(*from);
  redis::SyncClient target = connect(to);
  const std::string source_id = node_id(source);
  const std::string target_id = node_id(target);
  const std::string slot_text = std::to_string(slot);

  must(target, {"CLUSTER", "SETSLOT", slot_text, "IMPORTING", source_id});
  must(source, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", target_id});

  // Keys written meanwhile go to the target (the source answers ASK for a key it lacks), so
  // the source's set only shrinks and the loop ends.
  const std::string batch = std::to_string(k_migrate_batch);
  const std::string port = std::to_string(to.port);
  while (true) {
    const redis::ReplyPtr keys = must(source, {"CLUSTER", "GETKEYSINSLOT", slot_text, batch});
    if (keys->type != REDIS_REPLY_ARRAY)
      throw std::runtime_error("GETKEYSINSLOT: " + redis::describe_reply(keys.get()));
    if (keys->elements == 0)
      break;
    std::vector<std::string_view> migrate = {
        "MIGRATE", to.host, port, "", "0", k_migrate_timeout_ms, "KEYS"};
    for (size_t i = 0; i < keys->elements; ++i)
      migrate.emplace_back(keys->element[i]->str, keys->element[i]->len);
    must(source, migrate);  // OK, or NOKEY when the keys went (deleted, expired) meanwhile
  }

  must(target, {"CLUSTER", "SETSLOT", slot_text, "NODE", target_id});
  must(source, {"CLUSTER", "SETSLOT", slot_text, "NODE", target_id});
  for (const redis::NodeAddress& master : map.masters()) {
    if (master == *from || master == to)
      continue;
    redis::SyncClient other = connect(master);
    must(other, {"CLUSTER", "SETSLOT", slot_text, "NODE", target_id});
  }
}

}  // namespace rlcheck::testing
