#include "redis/script_reply.hpp"

#include <fmt/format.h>

#include "redis/reply.hpp"

namespace rlcheck::redis {
namespace {

std::expected<bool, std::string> allowed_flag(const redisReply& reply) {
  if (reply.type != REDIS_REPLY_INTEGER) {
    return std::unexpected(fmt::format("allowed is {}", describe_reply(&reply)));
  }
  if (reply.integer != 0 && reply.integer != 1) {
    return std::unexpected(fmt::format("allowed is {}, not 1 or 0", reply.integer));
  }
  return reply.integer == 1;
}

}  // namespace

std::expected<engine::Decision, std::string> decision_from_script_reply(const redisReply& reply) {
  engine::Decision decision;
  if (reply.type == REDIS_REPLY_INTEGER) {
    auto allowed = allowed_flag(reply);
    if (!allowed)
      return std::unexpected(fmt::format("returned {}", allowed.error()));
    decision.outcome = *allowed ? engine::Outcome::allowed : engine::Outcome::denied;
    return decision;
  }
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements == 0 || reply.elements > 3) {
    return std::unexpected(fmt::format("returned {}", describe_reply(&reply)));
  }
  auto allowed = allowed_flag(*reply.element[0]);
  if (!allowed)
    return std::unexpected(fmt::format("returned an array whose {}", allowed.error()));
  decision.outcome = *allowed ? engine::Outcome::allowed : engine::Outcome::denied;
  for (size_t i = 1; i < reply.elements; ++i) {
    const redisReply& element = *reply.element[i];
    if (element.type != REDIS_REPLY_INTEGER) {
      return std::unexpected(fmt::format("returned an array whose {} is {}",
                                         i == 1 ? "remaining" : "retry_ms",
                                         describe_reply(&element)));
    }
    if (i == 1)
      decision.remaining = element.integer;
    if (i == 2)
      decision.retry_ms = element.integer;
  }
  decision.hint_expected = reply.elements == 3;
  if (decision.outcome == engine::Outcome::allowed)
    decision.retry_ms.reset();
  return decision;
}

}  // namespace rlcheck::redis
