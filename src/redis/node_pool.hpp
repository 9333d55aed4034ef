#pragma once
// The Redis connections of one event loop, shared by its clients: connection i of the server
// (or, on a cluster, of each master) carries the requests of clients i*D ... i*D+D-1 with
// --pipeline D. Made before the clients and destroyed after them (engine::LoopShared).

#include <memory>
#include <vector>

#include "engine/client.hpp"
#include "redis/connection.hpp"

struct event_base;

namespace rlcheck::redis {

struct RunTarget;

class NodePool final : public engine::LoopShared {
 public:
  NodePool(event_base* base, RunTarget& target, bool reconnect);
  ~NodePool() override;

  // Connection `index` to the server (made on first use, not yet opened).
  Connection& connection(int index);

 private:
  ConnectionSettings settings_for(const Endpoint& endpoint) const;

  event_base* base_;
  RunTarget& target_;
  bool reconnect_;
  std::vector<std::unique_ptr<Connection>> connections_;
};

}  // namespace rlcheck::redis
