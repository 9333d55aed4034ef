#pragma once
// Which identity each request of a run speaks for (--identity-dist): a pure function of the
// request number, so every worker thread and every worker host computes the same identity for
// the same request without sharing anything.

#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "config/identity_dist.hpp"

namespace rlcheck::engine {

class IdentityMap {
 public:
  // One identity: every request speaks for identity 0.
  IdentityMap() = default;
  // uniform: seq mod identities, exactly. hot:P: identity 0 with probability P, else one of
  // 1..identities-1 evenly. zipf:S: identity k with probability proportional to 1/(k+1)^S.
  // The draws are counter-based (a hash of seed and seq), so random access needs no state.
  IdentityMap(const config::IdentityDist& dist, int64_t identities, uint64_t seed);
  // Every request speaks for `identity`.
  static IdentityMap only(uint32_t identity);

  uint32_t of(uint64_t seq) const;

 private:
  config::IdentityShape shape_ = config::IdentityShape::uniform;
  uint64_t identities_ = 1;
  uint64_t seed_ = 0;
  double hot_share_ = 0;
  std::vector<double> cdf_;  // zipf: the share of identities 0..k, the last exactly 1
  bool fixed_ = false;       // only(): every request speaks for fixed_identity_
  uint32_t fixed_identity_ = 0;
};

// The map of a run's load: load.only_identity when set, else its distribution over its
// identities drawn from load.identity_seed.
IdentityMap identity_map_of(const config::LoadConfig& load);

}  // namespace rlcheck::engine
