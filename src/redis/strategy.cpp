#include "redis/strategy.hpp"

#include <charconv>

#include <algorithm>

#include "redis/strategies/counter_strategies.hpp"
#include "redis/strategies/script_strategy.hpp"

namespace rlcheck::redis {

const std::string& IdentityKeys::of(RequestState& state) const {
  if (identities_ <= 1)
    return key_;
  identity_into(state.key, state.identity);
  return state.key;
}

void IdentityKeys::identity_into(std::string& out, uint64_t id) const {
  out.clear();
  if (tagged_)
    out.push_back('{');
  out.append(key_);
  out.push_back(':');
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, id);
  out.append(digits, end);
  if (tagged_)
    out.push_back('}');
}

std::string IdentityKeys::of_identity(uint64_t id) const {
  if (identities_ <= 1)
    return key_;
  std::string key;
  identity_into(key, id);
  return key;
}

std::vector<std::string> IdentityKeys::all() const {
  std::vector<std::string> keys;
  for (int64_t id = 0; id < identities_; ++id)
    keys.push_back(of_identity(static_cast<uint64_t>(id)));
  return keys;
}

namespace {

// Redis Cluster hashes only the part between the first '{' and the next '}', when not empty.
bool has_hash_tag(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos)
    return false;
  const size_t close = key.find('}', open + 1);
  return close != std::string_view::npos && close > open + 1;
}

}  // namespace

void script_key_into(std::string& out, std::string_view key, int64_t count, int64_t index) {
  out.clear();
  if (count <= 1) {
    out.append(key);
    return;
  }
  const bool tagged = has_hash_tag(key);
  if (!tagged)
    out.push_back('{');
  out.append(key);
  if (!tagged)
    out.push_back('}');
  out.push_back(':');
  out.append(std::to_string(index));
}

std::vector<std::string> script_keys(std::string_view key, int64_t count) {
  std::vector<std::string> keys(static_cast<size_t>(std::max<int64_t>(1, count)));
  for (size_t i = 0; i < keys.size(); ++i)
    script_key_into(keys[i], key, count, static_cast<int64_t>(i));
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
    case config::Strategy::sliding_counter:
    case config::Strategy::fixed_first_hit:
    case config::Strategy::leaky_queue:
    case config::Strategy::concurrency:
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
