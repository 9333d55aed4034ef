#pragma once
// What rlcheck found behind an endpoint: one server or a Redis Cluster of M masters, and
// whether it is spoken to over TLS. Shown in reports as params.topology.

#include "redis/endpoint.hpp"

namespace rlcheck::redis {

struct Topology {
  enum class Kind { standalone, cluster };
  Kind kind = Kind::standalone;
  int masters = 1;   // cluster: the masters serving slots; standalone: 1
  bool tls = false;  // rediss://
};

// One standalone server at `endpoint`: what a connection shows before any cluster discovery.
Topology standalone_topology(const Endpoint& endpoint);

// "standalone" or "cluster", as the JSON report names the kind.
const char* topology_kind_name(Topology::Kind kind);

}  // namespace rlcheck::redis
