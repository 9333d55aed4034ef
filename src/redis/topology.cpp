#include "redis/topology.hpp"

namespace rlcheck::redis {
namespace {

// The one place a topology learns whether its endpoint speaks TLS. parse_endpoint refuses
// rediss:// on this transport, so every endpoint here is plain TCP or a unix socket; an
// Endpoint that records TLS is read here and nowhere else.
bool uses_tls(const Endpoint&) {
  return false;
}

}  // namespace

Topology standalone_topology(const Endpoint& endpoint) {
  Topology topology;
  topology.tls = uses_tls(endpoint);
  return topology;
}

const char* topology_kind_name(Topology::Kind kind) {
  return kind == Topology::Kind::cluster ? "cluster" : "standalone";
}

}  // namespace rlcheck::redis
