#pragma once
// A blocking Redis connection for set-up and tear-down (SCRIPT LOAD, PTTL, DEL), never for
// the load itself. It drives the same Connection as the load (plain or TLS, on a private
// event loop), so whatever the load can reach, set-up can too.

#include <expected>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.hpp"
#include "redis/cluster_slots.hpp"
#include "redis/endpoint.hpp"
#include "redis/reply.hpp"

namespace rlcheck::redis {

// On a Redis Cluster (after discover_cluster), a command with a key goes to the master of the
// key's slot, following MOVED and ASK; SCRIPT goes to every master, so a script is loaded
// wherever a key may live. Commands without a key go to the node connected first.
class SyncClient {
 public:
  // Connects (TLS for rediss://), authenticates, selects the database and PINGs. On error:
  // what was tried and what went wrong, e.g. "cannot connect to redis://127.0.0.1:1:
  // Connection refused". `timeout` bounds the connect and every call.
  static std::expected<SyncClient, std::string> connect(const Endpoint& endpoint,
                                                        config::Nanos timeout);
  SyncClient(SyncClient&&) noexcept;
  SyncClient& operator=(SyncClient&&) noexcept;
  ~SyncClient();

  // Sends one command. An I/O failure is an error; an error *reply* is a reply (see is_error).
  std::expected<ReplyPtr, std::string> call(const std::vector<std::string_view>& argv);
  std::expected<ReplyPtr, std::string> call(std::initializer_list<std::string_view> argv) {
    return call(std::vector<std::string_view>(argv));
  }
  // The next reply the server pushes without a command (after MONITOR or SUBSCRIBE).
  std::expected<ReplyPtr, std::string> read_reply();

  const Endpoint& endpoint() const;

  // Asks the server whether it is a Redis Cluster (CLUSTER SLOTS). Yes: from now on commands
  // are routed by key, and the slot map is returned. No (a standalone server, or a user not
  // allowed CLUSTER): nullopt. An error: the slot map could not be read.
  std::expected<std::optional<SlotMap>, std::string> discover_cluster();
  const std::optional<SlotMap>& slot_map() const { return slots_; }

 private:
  class Session;
  explicit SyncClient(std::unique_ptr<Session> session);
  std::expected<ReplyPtr, std::string> call_node(const NodeAddress& node,
                                                 const std::vector<std::string_view>& argv,
                                                 bool asking);
  std::expected<ReplyPtr, std::string> call_by_key(std::string_view key,
                                                   const std::vector<std::string_view>& argv);
  std::expected<ReplyPtr, std::string> call_every_master(const std::vector<std::string_view>& argv);

  std::unique_ptr<Session> session_;
  config::Nanos timeout_{0};
  std::optional<SlotMap> slots_;
  std::vector<std::pair<NodeAddress, std::unique_ptr<Session>>> nodes_;  // cluster: by master
};

}  // namespace rlcheck::redis
