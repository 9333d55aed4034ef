#include "support/test_acl.hpp"

#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "redis/reply.hpp"
#include "support/test_redis.hpp"

namespace rlcheck::testing {

const std::vector<std::string>& sliding_window_user_rules() {
  static const std::vector<std::string> rules{
      "+@connection", "+script|load",      "+evalsha", "+eval",   "+pttl", "+del",
      "+time",        "+zremrangebyscore", "+zcard",   "+zrange", "+zadd", "+pexpire",
  };
  return rules;
}

void create_acl_user(const std::string& name, const std::string& password,
                     const std::vector<std::string>& rules) {
  const std::string password_rule = ">" + password;
  std::vector<std::string_view> command{"ACL", "SETUSER", name, "reset", "on", password_rule, "~*"};
  command.insert(command.end(), rules.begin(), rules.end());
  redis::SyncClient client = TestRedis::shared().connect();
  auto reply = client.call(command);
  if (!reply)
    throw std::runtime_error(reply.error());
  if ((*reply)->type != REDIS_REPLY_STATUS) {
    throw std::runtime_error(
        fmt::format("ACL SETUSER {}: {}", name, redis::describe_reply(reply->get())));
  }
}

bool acl_user_exists(const std::string& name) {
  redis::SyncClient client = TestRedis::shared().connect();
  auto reply = client.call({"ACL", "USERS"});
  if (!reply || (*reply)->type != REDIS_REPLY_ARRAY)
    throw std::runtime_error("ACL USERS failed");
  for (size_t i = 0; i < (*reply)->elements; ++i) {
    const redisReply* user = (*reply)->element[i];
    if (std::string(user->str, user->len) == name)
      return true;
  }
  return false;
}

std::string acl_user_url(const std::string& name, const std::string& password) {
  return fmt::format("redis://{}:{}@127.0.0.1:{}", name, password, TestRedis::shared().port());
}

}  // namespace rlcheck::testing
