#pragma once
// A real 3-master Redis Cluster for the integration tests (provision::EmbeddedCluster), started on
// first use and stopped when the test binary exits (and one with a replica per master); and what
// the tests do to it: find a key's master, connect to it, and move a slot from one master to
// another while it is in use.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "provision/embedded_cluster.hpp"
#include "redis/cluster_slots.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::testing {

class TestCluster {
 public:
  static constexpr int k_masters = 3;

  // Fails the test binary (throws) if the cluster cannot start.
  static TestCluster& shared();
  // Another cluster of k_masters masters with one replica each, for failovers (started on
  // first use; its masters change as tests fail over).
  static TestCluster& shared_with_replicas();

  std::vector<redis::Endpoint> endpoints() const { return cluster_->endpoints(); }
  redis::Endpoint seed_endpoint() const { return cluster_->seed_endpoint(); }

  // The slot map as the seed node reports it now (CLUSTER SLOTS).
  redis::SlotMap slot_map() const;
  // The master that serves `key`'s slot now.
  redis::NodeAddress master_of(std::string_view key) const;
  // A fresh blocking connection to `node`, or to the master of `key`.
  redis::SyncClient connect(const redis::NodeAddress& node) const;
  redis::SyncClient connect_to_master_of(std::string_view key) const;

  // Moves `slot` and its keys from the master serving it to master `to`, as redis-cli
  // --cluster reshard does: IMPORTING on `to`, MIGRATING on the owner, MIGRATE of the keys in
  // batches until none is left, then NODE on `to`, the owner and every other master. Clients
  // may go on using the slot meanwhile (they get ASK, and TRYAGAIN for multi-key commands).
  // Throws when a step is refused.
  void migrate_slot(uint16_t slot, const redis::NodeAddress& to) const;

 private:
  explicit TestCluster(int replicas_per_master);
  std::unique_ptr<provision::EmbeddedCluster> cluster_;
};

}  // namespace rlcheck::testing
