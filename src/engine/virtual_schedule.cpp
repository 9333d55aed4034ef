#include "engine/virtual_schedule.hpp"

#include <algorithm>

namespace rlcheck::engine {

IdentityCursor::IdentityCursor(const config::LoadConfig& load, int client_id)
    : identities_(static_cast<uint64_t>(std::max<int64_t>(1, load.identities))),
      owners_(
          std::min<uint64_t>(static_cast<uint64_t>(std::max(1, load.concurrency)), identities_)),
      owner_(static_cast<uint64_t>(client_id)),
      end_(load.first_seq + static_cast<uint64_t>(std::max<int64_t>(0, load.requests))) {
  next_ = owner_ < owners_ ? owned_from(load.first_seq) : end_;
}

uint64_t IdentityCursor::owned_from(uint64_t seq) const {
  const uint64_t round = seq / identities_;
  const uint64_t identity = seq % identities_;
  // The smallest identity at or after this one that is the owner's (mod owners_).
  const uint64_t ahead = (owner_ + owners_ - identity % owners_) % owners_;
  if (identity + ahead < identities_)
    return round * identities_ + identity + ahead;
  return (round + 1) * identities_ + owner_;
}

std::optional<uint64_t> IdentityCursor::next() {
  if (next_ >= end_)
    return std::nullopt;
  const uint64_t seq = next_;
  next_ = owned_from(seq + 1);
  return seq;
}

}  // namespace rlcheck::engine
