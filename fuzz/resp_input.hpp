#pragma once
// Redis replies read from fuzz bytes the way redis::Connection reads a socket: hiredis'
// redisReader with the connection's pooled, capped builders, fed in chunks (the first byte sets the
// chunk size, 1-64, so replies split across reads are covered), every complete reply handed on, a
// protocol error ending the input.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "redis/connection.hpp"
#include "redis/reply.hpp"

namespace rlcheck::fuzz {

template <class OnReply>
void for_each_reply(const uint8_t* data, size_t size, OnReply&& on_reply) {
  if (size == 0)
    return;
  const size_t chunk = data[0] % 64 + 1;
  ++data;
  --size;
  redis::ReplyTally tally;
  redisReader* reader = redis::new_reply_reader(tally);
  for (size_t offset = 0; offset < size; offset += chunk) {
    redisReaderFeed(reader, reinterpret_cast<const char*>(data) + offset,
                    std::min(chunk, size - offset));
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader, &raw) != REDIS_OK) {
        redisReaderFree(reader);
        return;
      }
      if (raw == nullptr)
        break;
      on_reply(redis::ReplyPtr(static_cast<redisReply*>(raw)));
    }
  }
  redisReaderFree(reader);
}

}  // namespace rlcheck::fuzz
