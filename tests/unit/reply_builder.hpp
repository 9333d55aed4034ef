#pragma once
// Hand-built hiredis replies for tests: no server, no parser. The builder owns every node
// and string, and hands out references that stay valid as long as it lives.

#include <deque>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <hiredis/hiredis.h>

namespace rlcheck::test {

class ReplyBuilder {
 public:
  redisReply& integer(long long value) {
    redisReply& r = node(REDIS_REPLY_INTEGER);
    r.integer = value;
    return r;
  }
  redisReply& string(std::string_view text) { return text_node(REDIS_REPLY_STRING, text); }
  redisReply& status(std::string_view text) { return text_node(REDIS_REPLY_STATUS, text); }
  redisReply& error(std::string_view text) { return text_node(REDIS_REPLY_ERROR, text); }
  redisReply& nil() { return node(REDIS_REPLY_NIL); }
  redisReply& array(std::initializer_list<redisReply*> elements) {
    redisReply& r = node(REDIS_REPLY_ARRAY);
    std::vector<redisReply*>& storage = arrays_.emplace_back(elements);
    r.elements = storage.size();
    r.element = storage.empty() ? nullptr : storage.data();
    return r;
  }
  redisReply& integers(std::initializer_list<long long> values) {
    redisReply& r = node(REDIS_REPLY_ARRAY);
    std::vector<redisReply*>& storage = arrays_.emplace_back();
    for (long long v : values)
      storage.push_back(&integer(v));
    r.elements = storage.size();
    r.element = storage.data();
    return r;
  }

 private:
  redisReply& node(int type) {
    redisReply& r = nodes_.emplace_back();
    r.type = type;
    return r;
  }
  redisReply& text_node(int type, std::string_view text) {
    redisReply& r = node(type);
    std::string& storage = texts_.emplace_back(text);
    r.str = storage.data();
    r.len = storage.size();
    return r;
  }

  std::deque<redisReply> nodes_;
  std::deque<std::string> texts_;
  std::deque<std::vector<redisReply*>> arrays_;
};

}  // namespace rlcheck::test
