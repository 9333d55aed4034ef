#pragma once
// Redis replies read from fuzz bytes the way redis::Connection reads a socket: its ReplyReader
// (the integer scanner, then hiredis' reader with the connection's pooled, capped builders),
// fed in chunks (the first byte sets the chunk size, 1-64, so replies split across reads are
// covered), every complete reply handed on, a protocol error ending the input.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "redis/reply.hpp"
#include "redis/reply_reader.hpp"

namespace rlcheck::fuzz {

template <class OnReply>
void for_each_reply(const uint8_t* data, size_t size, OnReply&& on_reply) {
  if (size == 0)
    return;
  const size_t chunk = data[0] % 64 + 1;
  ++data;
  --size;
  redis::ReplyReader reader;
  for (size_t offset = 0; offset < size; offset += chunk) {
    reader.feed(reinterpret_cast<const char*>(data) + offset, std::min(chunk, size - offset));
    for (;;) {
      redis::ReplyPtr reply;
      const auto status = reader.next(reply);
      if (status == redis::ReplyReader::Status::error)
        return;
      if (status == redis::ReplyReader::Status::more)
        break;
      on_reply(std::move(reply));
    }
  }
}

}  // namespace rlcheck::fuzz
