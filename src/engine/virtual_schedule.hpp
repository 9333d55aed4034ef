#pragma once
// Under --virtual-clock, which client sends which request: pure arithmetic on the load, shared
// by the workers and their tests. When each is due, and so its virtual instant, is the run's
// Schedule's (engine/schedule.hpp).

#include <cstdint>
#include <optional>

#include "config/config.hpp"

namespace rlcheck::engine {

// The requests one client sends under the virtual clock, in order. Identity j belongs to client
// j mod P', where P' = min(clients, identities): each identity's requests go out on one client,
// one at a time, in virtual-time order, and up to P' identities are in flight at once. Clients
// past P' send nothing. O(1) state and step. Each request's instant is
// Schedule::virtual_ns(seq - first_seq).
class IdentityCursor {
 public:
  IdentityCursor(const config::LoadConfig& load, int client_id);
  // The next request number (seq) of this client, or nullopt once it has sent its share.
  std::optional<uint64_t> next();

 private:
  // The first seq at or after `seq` whose identity this client owns.
  uint64_t owned_from(uint64_t seq) const;

  uint64_t identities_ = 1;
  uint64_t owners_ = 1;  // P'
  uint64_t owner_ = 0;   // this client's residue
  uint64_t next_ = 0;
  uint64_t end_ = 0;  // one past the run's last seq
};

}  // namespace rlcheck::engine
