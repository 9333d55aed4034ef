#pragma once
// A private Redis Cluster of N masters (and optionally R replicas of each) on loopback, in a
// temporary directory: for `--embedded-cluster N` and the cluster tests. Each master is a
// redis-server on a free port with its cluster bus on another; the slots are split evenly. It
// persists nothing and is stopped, and its directory removed, when this object goes.

#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "process/child_process.hpp"
#include "redis/endpoint.hpp"

namespace rlcheck::provision {

class EmbeddedCluster {
 public:
  // Starts `masters` (1 or more) instances of `server_path`, gives each its share of the 16384
  // slots, introduces them to each other and waits (at most about 15 s) until every node says
  // the cluster is ok and serves every slot from `masters` masters. On error, what went wrong,
  // e.g. "/usr/bin/redis-server exited: <its last log line>"; nothing is left running.
  static std::expected<std::unique_ptr<EmbeddedCluster>, std::string> start(
      const std::string& server_path, int masters);
  // The same, with `replicas_per_master` replicas of each master (CLUSTER REPLICATE), and
  // waits (at most about 15 s more) until every master lists its replicas as connected and
  // every replica's link to its master is up, so a CLUSTER FAILOVER can follow at once.
  static std::expected<std::unique_ptr<EmbeddedCluster>, std::string> start(
      const std::string& server_path, int masters, int replicas_per_master);
  ~EmbeddedCluster();
  EmbeddedCluster(const EmbeddedCluster&) = delete;
  EmbeddedCluster& operator=(const EmbeddedCluster&) = delete;

  // One TCP endpoint per master, in the order of their slot ranges (the first serves slot 0).
  std::vector<redis::Endpoint> endpoints() const;
  // The first master: where a client starts to discover the cluster.
  redis::Endpoint seed_endpoint() const;

 private:
  struct Node {
    int port = 0;      // clients
    int bus_port = 0;  // cluster bus
    std::filesystem::path log;
    process::ChildProcess child;
  };

  EmbeddedCluster(std::filesystem::path directory, int masters)
      : directory_(std::move(directory)), masters_(masters) {}
  // Starts node `index` on free ports and waits until it answers PING; retries on a port
  // taken by someone else in between.
  static std::expected<Node, std::string> start_node(const std::string& server_path,
                                                     const std::filesystem::path& directory,
                                                     int index);
  // Slots, epochs and MEET; then waits until every node sees the whole cluster.
  std::expected<void, std::string> form() const;
  // CLUSTER REPLICATE for each replica node; then waits until the replication links are up.
  std::expected<void, std::string> attach_replicas(int replicas_per_master) const;

  std::filesystem::path directory_;  // created by start(), removed by the destructor
  int masters_ = 0;                  // nodes_[0, masters_) are masters, the rest replicas
  std::vector<Node> nodes_;          // stopped by the destructor, before the directory goes
};

}  // namespace rlcheck::provision
