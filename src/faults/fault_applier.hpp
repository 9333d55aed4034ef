#pragma once
// Applies one --fault to the limiter's Redis, now, through connections of its own (never one
// of the load's): CLIENT PAUSE, CLIENT KILL, SCRIPT FLUSH, a restart of the private
// redis-server, CLUSTER FAILOVER on a replica, or a shell command.

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.hpp"
#include "config/fault_spec.hpp"
#include "provision/embedded_server.hpp"
#include "redis/endpoint.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::faults {

// The Redis the faults act on.
struct FaultedRedis {
  redis::Endpoint endpoint;                        // the limiter's Redis (a cluster's seed node)
  provision::EmbeddedServer* embedded = nullptr;   // restart@: the private server, when it is one
  config::Nanos timeout{std::chrono::seconds(5)};  // connect and every command
};

// Whether every fault of `faults` can act on `target`, asked before the first run: restart@
// needs the private redis-server, failover@ a cluster whose every master has a replica.
// On error, one line naming the fault and why (failover: exit 3; restart: see restart_refusal).
std::expected<void, std::string> check_failover_support(
    const FaultedRedis& target, const std::vector<config::FaultSpec>& faults);
// restart@ with a Redis rlcheck did not start: why, naming the fault; nullopt when fine.
std::optional<std::string> restart_refusal(const FaultedRedis& target,
                                           const std::vector<config::FaultSpec>& faults);

class FaultApplier {
 public:
  explicit FaultApplier(FaultedRedis target);

  // Applies `fault` and returns once it has taken effect (failover: once the replica serves
  // as master). `failover_key` picks the master a failover@ acts on (the one serving its slot;
  // empty: the first master). On error, why, e.g. "Redis refused CLIENT PAUSE: NOPERM ...".
  std::expected<void, std::string> apply(const config::FaultSpec& fault,
                                         std::string_view failover_key);

 private:
  // One command on the seed connection, made again once when the call fails on I/O (the
  // server restarted, or dropped the connection).
  std::expected<redis::ReplyPtr, std::string> call_seed(const std::vector<std::string_view>& argv);
  // The masters now (the seed alone for a standalone server).
  std::expected<std::vector<redis::Endpoint>, std::string> masters();
  // `argv` on every master; an error reply is an error.
  std::expected<void, std::string> on_every_master(const std::vector<std::string_view>& argv);
  std::expected<void, std::string> failover(std::string_view key);
  std::expected<void, std::string> run_shell(const std::string& command);

  FaultedRedis target_;
  std::optional<redis::SyncClient> seed_;
};

}  // namespace rlcheck::faults
