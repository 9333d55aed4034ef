#include "redis/node_pool.hpp"

#include "redis/async_client.hpp"

namespace rlcheck::redis {

NodePool::NodePool(event_base* base, RunTarget& target, bool reconnect)
    : base_(base), target_(target), reconnect_(reconnect), slots_(target.slots) {
  if (!slots_) {
    auto standalone = std::make_unique<Node>();
    standalone->address = {target.endpoint.host, target.endpoint.port};
    nodes_.push_back(std::move(standalone));
  }
  if (target.release != nullptr && reconnect)
    releases_ = std::make_unique<LeaseReleases>(*this, target);
}

NodePool::~NodePool() {
  releases_.reset();  // its timers before the loop, its sink before the connections
}

void NodePool::settle() {
  if (releases_)
    releases_->settle();
}

NodePool::Node& NodePool::node(const NodeAddress& address) {
  for (auto& known : nodes_) {
    if (known->address == address)
      return *known;
  }
  nodes_.push_back(std::make_unique<Node>());
  nodes_.back()->address = address;
  return *nodes_.back();
}

Connection& NodePool::connection_of(Node& node, int index) {
  const auto at = static_cast<size_t>(index);
  if (node.connections.size() <= at)
    node.connections.resize(at + 1);
  if (!node.connections[at]) {
    const Endpoint endpoint =
        slots_ ? target_.endpoint.at(node.address.host, node.address.port) : target_.endpoint;
    // Set-up connected with the same settings already: an error there ended the test first.
    ConnectionSettings settings =
        connection_settings(endpoint, target_.connect_timeout).value_or(ConnectionSettings{});
    settings.reconnect = reconnect_;
    settings.stats = &target_.stats;
    if (at < sources_.size())
      settings.source_address = sources_[at];
    node.connections[at] = std::make_unique<Connection>(base_, std::move(settings));
  }
  return *node.connections[at];
}

Connection& NodePool::connection(int index, uint16_t slot) {
  if (!slots_)
    return connection_of(*nodes_.front(), index);
  auto owner = slots_->master_of(slot);
  return connection_of(node(owner ? *owner : slots_->masters().front()), index);
}

Connection& NodePool::connection_to(const NodeAddress& address, int index) {
  return connection_of(node(address), index);
}

std::vector<Connection*> NodePool::every_master(int index) {
  std::vector<Connection*> connections;
  if (!slots_) {
    connections.push_back(&connection(index));
    return connections;
  }
  for (const NodeAddress& master : slots_->masters())
    connections.push_back(&connection_to(master, index));
  return connections;
}

void NodePool::source_for(int index, const std::string& address) {
  const auto at = static_cast<size_t>(index);
  if (sources_.size() <= at)
    sources_.resize(at + 1);
  if (sources_[at].empty())
    sources_[at] = address;
}

void NodePool::moved(uint16_t slot, const NodeAddress& address) {
  if (slots_)
    slots_->assign(slot, address);
}

void NodePool::forget(ReadyWaiter* waiter, int index) {
  const auto at = static_cast<size_t>(index);
  for (auto& known : nodes_) {
    if (at < known->connections.size() && known->connections[at])
      known->connections[at]->forget(waiter);
  }
}

}  // namespace rlcheck::redis
