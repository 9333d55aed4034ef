#include <doctest/doctest.h>

#include <string>

#include "redis/reply.hpp"

using rlcheck::redis::describe_reply;

namespace {

redisReply reply_of(int type, std::string& text) {
  redisReply reply{};
  reply.type = type;
  reply.str = text.data();
  reply.len = text.size();
  return reply;
}

}  // namespace

TEST_CASE("describe_reply shows a Redis error whole, however long") {
  std::string text =
      "ERR user_script:1: Script attempted to access nonexistent global variable "
      "'undefined_helper_function_name' script: 0123456789abcdef, on @user_script:1.";
  REQUIRE(text.size() > 80);
  const redisReply reply = reply_of(REDIS_REPLY_ERROR, text);
  CHECK(describe_reply(&reply) == "error \"" + text + "\"");
}

TEST_CASE("describe_reply cuts long string replies, which are data") {
  std::string text(200, 'x');
  const redisReply reply = reply_of(REDIS_REPLY_STRING, text);
  CHECK(describe_reply(&reply) == "string \"" + std::string(80, 'x') + "...\"");
  std::string short_text = "allowed";
  const redisReply short_reply = reply_of(REDIS_REPLY_STRING, short_text);
  CHECK(describe_reply(&short_reply) == "string \"allowed\"");
}
