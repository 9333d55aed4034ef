#pragma once
// The Redis connections of one event loop, shared by its clients: connection i of the server
// (or, on a cluster, of each master) carries the requests of clients i*D ... i*D+D-1 with
// --pipeline D. On a cluster the pool keeps the loop's own copy of the slot map, updated by
// MOVED. Made before the clients and destroyed after them (engine::LoopShared).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/client.hpp"
#include "redis/cluster_slots.hpp"
#include "redis/connection.hpp"
#include "redis/lease_releases.hpp"

struct event_base;

namespace rlcheck::redis {

struct RunTarget;

class NodePool final : public engine::LoopShared {
 public:
  NodePool(event_base* base, RunTarget& target, bool reconnect);
  ~NodePool() override;
  // --release-script: the releases this loop owes, run on after its last request.
  void settle() override;
  // The loop's releases of held leases; null when the run releases none.
  LeaseReleases* releases() { return releases_.get(); }

  event_base* base() const { return base_; }
  bool cluster() const { return slots_.has_value(); }
  // Standalone: connection `index` to the server. Cluster: to the master serving `slot` (the
  // first master while the slot has none). Made on first use, not yet opened.
  Connection& connection(int index, uint16_t slot = 0);
  // Connection `index` to `node` (a MOVED or ASK target).
  Connection& connection_to(const NodeAddress& node, int index);
  // Connection `index` to every known master (a cluster client connects to all first).
  std::vector<Connection*> every_master(int index);
  // After MOVED: `node` serves `slot` from now on.
  void moved(uint16_t slot, const NodeAddress& node);
  // Forgets `waiter` on connection `index` to every node: the only ones a client of that
  // index waits on (it asks for no other index).
  void forget(ReadyWaiter* waiter, int index);
  // --source-address: connection `index` (to every node) leaves from `address`. Said before
  // the connection is first asked for; the first word for an index holds.
  void source_for(int index, const std::string& address);

 private:
  struct Node {
    NodeAddress address;
    std::vector<std::unique_ptr<Connection>> connections;
  };
  Connection& connection_of(Node& node, int index);
  Node& node(const NodeAddress& address);

  event_base* base_;
  RunTarget& target_;
  bool reconnect_;
  std::optional<SlotMap> slots_;
  std::vector<std::unique_ptr<Node>> nodes_;  // standalone: one node, the endpoint
  std::vector<std::string> sources_;          // by connection index; empty: unbound
  std::unique_ptr<LeaseReleases> releases_;   // last: gone before the connections
};

}  // namespace rlcheck::redis
