#include "redis/strategy.hpp"

#include "redis/strategies/counter_strategies.hpp"
#include "redis/strategies/script_strategy.hpp"

namespace rlcheck::redis {

const std::string& IdentityKeys::of(RequestState& state) const {
  if (identities_ <= 1)
    return key_;
  state.key = of_identity(state.seq % static_cast<uint64_t>(identities_));
  return state.key;
}

std::string IdentityKeys::of_identity(uint64_t id) const {
  return identities_ <= 1 ? key_ : key_ + ":" + std::to_string(id);
}

std::vector<std::string> IdentityKeys::all() const {
  std::vector<std::string> keys;
  for (int64_t id = 0; id < identities_; ++id)
    keys.push_back(of_identity(static_cast<uint64_t>(id)));
  return keys;
}

std::unique_ptr<Strategy> make_strategy(const StrategyParams& params) {
  switch (params.kind) {
    case config::Strategy::naive:
      return make_naive(params);
    case config::Strategy::incr_expire:
      return make_incr_expire(params);
    case config::Strategy::fixed_window:
      return make_fixed_window(params);
    case config::Strategy::sliding_window:
    case config::Strategy::token_bucket:
    case config::Strategy::gcra:
    case config::Strategy::script:
      return make_script_strategy(params);
  }
  return nullptr;
}

engine::Decision allowed_decision() {
  engine::Decision decision;
  decision.outcome = engine::Outcome::allowed;
  return decision;
}

engine::Decision denied_decision(std::optional<int64_t> retry_ms, bool hint_expected) {
  engine::Decision decision;
  decision.outcome = engine::Outcome::denied;
  decision.retry_ms = retry_ms;
  decision.hint_expected = hint_expected;
  return decision;
}

engine::Decision bad_reply_decision(std::string message) {
  engine::Decision decision;
  decision.outcome = engine::Outcome::error;
  decision.error = engine::ErrorKind::bad_reply;
  decision.error_message = std::move(message);
  return decision;
}

}  // namespace rlcheck::redis
