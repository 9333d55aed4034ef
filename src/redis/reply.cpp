#include "redis/reply.hpp"

#include <charconv>
#include <string_view>

#include <fmt/format.h>

namespace rlcheck::redis {
namespace {

// Strings are data and may be huge, so they are cut; errors and statuses are Redis's own
// words (a Lua compile error names the line and the token only at its end), so they are whole.
std::string quoted(const redisReply* reply, bool cut) {
  constexpr size_t k_max = 80;
  std::string_view text(reply->str, reply->len);
  if (cut && text.size() > k_max)
    return fmt::format("\"{}...\"", text.substr(0, k_max));
  return fmt::format("\"{}\"", text);
}

}  // namespace

std::string describe_reply(const redisReply* reply) {
  if (reply == nullptr)
    return "no reply";
  switch (reply->type) {
    case REDIS_REPLY_INTEGER:
      return fmt::format("integer {}", reply->integer);
    case REDIS_REPLY_STRING:
      return fmt::format("string {}", quoted(reply, true));
    case REDIS_REPLY_STATUS:
      return fmt::format("status {}", quoted(reply, false));
    case REDIS_REPLY_ERROR:
      return fmt::format("error {}", quoted(reply, false));
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_ARRAY:
      return fmt::format("array of {}", reply->elements);
    default:
      return fmt::format("reply of type {}", reply->type);
  }
}

bool same_reply(const redisReply* a, const redisReply* b) {
  if (a == nullptr || b == nullptr)
    return a == b;
  if (a->type != b->type || a->integer != b->integer || a->len != b->len ||
      a->elements != b->elements)
    return false;
  if (a->len > 0 && std::string_view(a->str, a->len) != std::string_view(b->str, b->len))
    return false;
  for (size_t i = 0; i < a->elements; ++i) {
    if (!same_reply(a->element[i], b->element[i]))
      return false;
  }
  return true;
}

bool is_error(const redisReply* reply) {
  return reply != nullptr && reply->type == REDIS_REPLY_ERROR;
}

bool is_noscript(const redisReply* reply) {
  return is_error(reply) && std::string_view(reply->str, reply->len).starts_with("NOSCRIPT");
}

std::optional<int64_t> time_reply_ns(const redisReply* reply) {
  if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2)
    return std::nullopt;
  int64_t parts[2] = {0, 0};
  for (size_t i = 0; i < 2; ++i) {
    const redisReply* part = reply->element[i];
    if (part->type != REDIS_REPLY_STRING)
      return std::nullopt;
    const char* end = part->str + part->len;
    const auto [stop, error] = std::from_chars(part->str, end, parts[i]);
    if (error != std::errc() || stop != end)
      return std::nullopt;
  }
  return parts[0] * 1'000'000'000 + parts[1] * 1000;
}

}  // namespace rlcheck::redis
