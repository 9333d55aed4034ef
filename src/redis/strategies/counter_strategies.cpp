#include "redis/strategies/counter_strategies.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "redis/reply.hpp"

namespace rlcheck::redis {
namespace {

using engine::Decision;

std::optional<int64_t> integer_of(const redisReply& reply) {
  if (reply.type == REDIS_REPLY_INTEGER)
    return reply.integer;
  if (reply.type == REDIS_REPLY_NIL)
    return 0;  // GET of a missing counter
  if (reply.type == REDIS_REPLY_STRING) {
    int64_t value = 0;
    auto [end, ec] = std::from_chars(reply.str, reply.str + reply.len, value);
    if (ec == std::errc() && end == reply.str + reply.len)
      return value;
  }
  return std::nullopt;
}

Decision unexpected_reply(std::string_view command, const redisReply& reply) {
  return bad_reply_decision(fmt::format("{} replied {}", command, describe_reply(&reply)));
}

class SingleKeyStrategy : public Strategy {
 public:
  explicit SingleKeyStrategy(const StrategyParams& params)
      : keys_(params.key, params.identities, params.hash_tag_each_identity),
        limit_(params.limit),
        window_ms_(params.window_ms),
        window_ms_text_(std::to_string(params.window_ms)) {}

  std::vector<std::string> keys_touched(engine::RecordView) const override { return keys_.all(); }

 protected:
  IdentityKeys keys_;
  int64_t limit_;
  int64_t window_ms_;
  std::string window_ms_text_;
};

class NaiveStrategy final : public SingleKeyStrategy {
 public:
  using SingleKeyStrategy::SingleKeyStrategy;

  void begin(RequestState& state, DecisionIo& io) const override {
    io.send({"GET", keys_.of(state)});
  }

  std::optional<Decision> on_reply(RequestState& state, const redisReply& reply,
                                   DecisionIo& io) const override {
    enum Step { get, incr, expire };
    auto value = integer_of(reply);
    switch (state.step) {
      case get:
        if (!value)
          return unexpected_reply("GET", reply);
        // --cost: room for the request's units (1 each without costs).
        if (*value + state.cost > limit_)
          return denied_decision(std::nullopt, false);
        state.step = incr;
        if (state.cost == 1)
          io.send({"INCR", keys_.of(state)});
        else
          io.send({"INCRBY", keys_.of(state), std::to_string(state.cost)});
        return std::nullopt;
      case incr:
        if (!value)
          return unexpected_reply("INCR", reply);
        if (*value != state.cost)
          return allowed_decision();
        state.step = expire;
        io.send({"PEXPIRE", keys_.of(state), window_ms_text_});
        return std::nullopt;
      default:
        return allowed_decision();
    }
  }
};

class IncrExpireStrategy final : public SingleKeyStrategy {
 public:
  using SingleKeyStrategy::SingleKeyStrategy;

  void begin(RequestState& state, DecisionIo& io) const override {
    // --cost: INCRBY the request's units (a denial's count too, as INCR counts every request).
    if (state.cost == 1)
      io.send({"INCR", keys_.of(state)});
    else
      io.send({"INCRBY", keys_.of(state), std::to_string(state.cost)});
  }

  std::optional<Decision> on_reply(RequestState& state, const redisReply& reply,
                                   DecisionIo& io) const override {
    enum Step { incr, expire, pttl };
    auto value = integer_of(reply);
    switch (state.step) {
      case incr:
        if (!value)
          return unexpected_reply("INCR", reply);
        if (*value == state.cost) {
          state.step = expire;
          io.send({"PEXPIRE", keys_.of(state), window_ms_text_});
          return std::nullopt;
        }
        if (*value <= limit_)
          return allowed_decision();
        state.step = pttl;
        io.send({"PTTL", keys_.of(state)});
        return std::nullopt;
      case expire:
        return allowed_decision();
      default:
        if (!value)
          return unexpected_reply("PTTL", reply);
        // -1: no TTL yet (the first request's PEXPIRE is still on its way) or ever (its client
        // died: the lock-out bug, which key-ttl reports). Middleware falls back to the window.
        if (*value == -1)
          return denied_decision(window_ms_, true);
        return denied_decision(std::max<int64_t>(*value, 0), true);
    }
  }
};

class FixedWindowStrategy final : public Strategy {
 public:
  explicit FixedWindowStrategy(const StrategyParams& params)
      : keys_(params.key, params.identities, params.hash_tag_each_identity),
        limit_(params.limit),
        window_ms_(params.window_ms),
        window_ms_text_(std::to_string(params.window_ms)) {}

  std::string window_key(const std::string& identity_key, int64_t window_index) const {
    return fmt::format("{}:{}", identity_key, window_index);
  }

  void begin(RequestState& state, DecisionIo& io) const override {
    state.now_ms = engine::floor_div(state.clock.read_ns(), 1'000'000);
    state.bucket = engine::floor_div(state.now_ms, window_ms_);
    const std::string key = window_key(keys_.of(state), state.bucket);
    io.send({"MULTI"});
    if (state.cost == 1)
      io.send({"INCR", key});
    else
      io.send({"INCRBY", key, std::to_string(state.cost)});
    io.send({"PEXPIRE", key, window_ms_text_});
    io.send({"EXEC"});
  }

  std::optional<Decision> on_reply(RequestState& state, const redisReply& reply,
                                   DecisionIo&) const override {
    constexpr int k_exec_reply = 3;  // after +OK, +QUEUED, +QUEUED
    if (state.step++ < k_exec_reply)
      return std::nullopt;
    if (reply.type != REDIS_REPLY_ARRAY || reply.elements < 1) {
      return unexpected_reply("EXEC", reply);
    }
    auto count = integer_of(*reply.element[0]);
    if (!count || reply.element[0]->type != REDIS_REPLY_INTEGER) {
      return unexpected_reply("INCR in EXEC", *reply.element[0]);
    }
    Decision decision = *count <= limit_
                            ? allowed_decision()
                            : denied_decision((state.bucket + 1) * window_ms_ - state.now_ms, true);
    decision.bucket = state.bucket;
    return decision;
  }

  std::vector<std::string> keys_touched(engine::RecordView records) const override {
    std::set<std::pair<uint32_t, int64_t>> windows;  // identity, window index
    for (const auto& record : records) {
      if (record.outcome != engine::Outcome::error)
        windows.emplace(record.identity, record.bucket);
    }
    std::vector<std::string> keys;
    for (const auto& [identity, window] : windows)
      keys.push_back(window_key(keys_.of_identity(identity), window));
    return keys;
  }

 private:
  IdentityKeys keys_;
  int64_t limit_;
  int64_t window_ms_;
  std::string window_ms_text_;
};

}  // namespace

std::unique_ptr<Strategy> make_naive(const StrategyParams& params) {
  return std::make_unique<NaiveStrategy>(params);
}
std::unique_ptr<Strategy> make_incr_expire(const StrategyParams& params) {
  return std::make_unique<IncrExpireStrategy>(params);
}
std::unique_ptr<Strategy> make_fixed_window(const StrategyParams& params) {
  return std::make_unique<FixedWindowStrategy>(params);
}

}  // namespace rlcheck::redis
