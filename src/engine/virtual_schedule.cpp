#include "engine/virtual_schedule.hpp"

#include <algorithm>

namespace rlcheck::engine {

std::chrono::nanoseconds due_offset(const config::LoadConfig& load, uint64_t index) {
  if (!load.rate)
    return load.interval * static_cast<int64_t>(index);
  const auto scaled = static_cast<__int128>(index) * load.rate->period.count() / load.rate->tokens;
  return std::chrono::nanoseconds(static_cast<int64_t>(scaled));
}

int64_t virtual_offset_ns(const config::LoadConfig& load, uint64_t index) {
  constexpr int64_t k_ms = 1'000'000;
  return due_offset(load, index).count() / k_ms * k_ms;
}

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
