#pragma once
// When each request of a run is due, and, under --virtual-clock, which client sends which
// request: pure arithmetic on the load, shared by the workers and their tests.

#include <chrono>
#include <cstdint>
#include <optional>

#include "config/config.hpp"

namespace rlcheck::engine {

// Request `index`'s due offset from the start line. Closed model: index x --interval (0 when
// unpaced). Open model: index / rate, exactly.
std::chrono::nanoseconds due_offset(const config::LoadConfig& load, uint64_t index);

// Request `index`'s virtual instant from the virtual start line: its due offset floored to a
// whole millisecond, so {now_ms}, {now_s} and the record name the same instant.
int64_t virtual_offset_ns(const config::LoadConfig& load, uint64_t index);

// The requests one client sends under the virtual clock, in order. Identity j belongs to client
// j mod P', where P' = min(clients, identities): each identity's requests go out on one client,
// one at a time, in virtual-time order, and up to P' identities are in flight at once. Clients
// past P' send nothing. O(1) state and step.
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
