#pragma once
// Every reply `resp` holds, read by hiredis' reader alone with the connections' pooled, capped
// builders: what rlcheck's own reply reader is held to.

#include <string_view>
#include <vector>

#include <doctest/doctest.h>
#include <hiredis/hiredis.h>

#include "redis/reply.hpp"
#include "redis/reply_reader.hpp"

namespace rlcheck::test {

// `failed`, when given, is set when the reader stopped at a protocol error.
inline std::vector<redis::ReplyPtr> hiredis_replies(std::string_view resp, bool* failed = nullptr) {
  redis::ReplyTally tally;
  redisReader* reader = redis::new_reply_reader(tally);
  REQUIRE(reader != nullptr);
  redisReaderFeed(reader, resp.data(), resp.size());
  std::vector<redis::ReplyPtr> replies;
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader, &raw) != REDIS_OK) {
      if (failed != nullptr)
        *failed = true;
      break;
    }
    if (raw == nullptr)
      break;
    replies.emplace_back(static_cast<redisReply*>(raw));
  }
  redisReaderFree(reader);
  return replies;
}

}  // namespace rlcheck::test
