#include "redis/node_pool.hpp"

#include "redis/async_client.hpp"
#include "redis/tls_stream.hpp"

namespace rlcheck::redis {

NodePool::NodePool(event_base* base, RunTarget& target, bool reconnect)
    : base_(base), target_(target), reconnect_(reconnect) {}

NodePool::~NodePool() = default;

ConnectionSettings NodePool::settings_for(const Endpoint& endpoint) const {
  ConnectionSettings settings;
  settings.endpoint = endpoint;
  settings.login = target_.login;
  settings.connect_timeout = target_.connect_timeout;
  settings.reconnect = reconnect_;
  settings.stats = &target_.stats;
  if (endpoint.tls) {
    // Set-up made the same context already (an error there ended the test before the load).
    if (auto tls = TlsContext::shared_for(endpoint.tls_options))
      settings.tls = std::move(*tls);
  }
  return settings;
}

Connection& NodePool::connection(int index) {
  const auto at = static_cast<size_t>(index);
  if (connections_.size() <= at)
    connections_.resize(at + 1);
  if (!connections_[at])
    connections_[at] = std::make_unique<Connection>(base_, settings_for(target_.endpoint));
  return *connections_[at];
}

}  // namespace rlcheck::redis
