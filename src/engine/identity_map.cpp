#include "engine/identity_map.hpp"

#include <algorithm>
#include <cmath>

namespace rlcheck::engine {
namespace {

// splitmix64's finaliser: consecutive inputs give independent-looking outputs.
uint64_t identity_hash(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The top 53 bits as a double in [0, 1).
double unit_interval(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace

IdentityMap::IdentityMap(const config::IdentityDist& dist, int64_t identities, uint64_t seed)
    : shape_(dist.shape),
      identities_(static_cast<uint64_t>(std::max<int64_t>(1, identities))),
      // Hashed once, so that nearby seeds do not draw the same identities for nearby seqs
      // (seed ^ seq alone would pair seed 42's seq 0 with seed 43's seq 1).
      seed_(identity_hash(seed)),
      hot_share_(dist.shape == config::IdentityShape::hot ? dist.parameter : 0) {
  if (shape_ != config::IdentityShape::zipf)
    return;
  cdf_.resize(identities_);
  double sum = 0;
  for (uint64_t k = 0; k < identities_; ++k) {
    sum += std::pow(static_cast<double>(k + 1), -dist.parameter);
    cdf_[k] = sum;
  }
  for (double& share : cdf_)
    share /= sum;
  cdf_.back() = 1.0;
}

IdentityMap IdentityMap::only(uint32_t identity) {
  IdentityMap map;
  map.fixed_ = true;
  map.fixed_identity_ = identity;
  return map;
}

uint32_t IdentityMap::of(uint64_t seq) const {
  if (fixed_)
    return fixed_identity_;
  if (identities_ <= 1)
    return 0;
  switch (shape_) {
    case config::IdentityShape::uniform:
      break;
    case config::IdentityShape::hot: {
      const uint64_t draw = identity_hash(seed_ ^ seq);
      if (unit_interval(draw) < hot_share_)
        return 0;
      return static_cast<uint32_t>(1 + identity_hash(draw) % (identities_ - 1));
    }
    case config::IdentityShape::zipf: {
      const double u = unit_interval(identity_hash(seed_ ^ seq));
      const auto rank = std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
      return static_cast<uint32_t>(
          std::min<uint64_t>(static_cast<uint64_t>(rank), identities_ - 1));
    }
  }
  return static_cast<uint32_t>(seq % identities_);
}

IdentityMap identity_map_of(const config::LoadConfig& load) {
  if (load.only_identity)
    return IdentityMap::only(*load.only_identity);
  return IdentityMap(load.identity_dist, load.identities, load.identity_seed);
}

}  // namespace rlcheck::engine
