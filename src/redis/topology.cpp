#include "redis/topology.hpp"

namespace rlcheck::redis {
Topology standalone_topology(const Endpoint& endpoint) {
  Topology topology;
  topology.tls = endpoint.tls;
  return topology;
}

const char* topology_kind_name(Topology::Kind kind) {
  return kind == Topology::Kind::cluster ? "cluster" : "standalone";
}

}  // namespace rlcheck::redis
