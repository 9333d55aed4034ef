// Fuzzes the connection's reply reader against hiredis' alone: the same bytes, fed in chunks
// (ReplyReader, whose scanner reads integer replies itself) and whole (hiredis' reader), must
// give the same replies, in order, and stop at the same error.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <hiredis/hiredis.h>

#include "redis/reply.hpp"
#include "redis/reply_reader.hpp"
#include "resp_input.hpp"

using namespace rlcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  // hiredis alone, fed everything at once.
  std::vector<redis::ReplyPtr> expected;
  redis::ReplyTally tally;
  redisReader* reader = redis::new_reply_reader(tally);
  redisReaderFeed(reader, reinterpret_cast<const char*>(data) + 1, size - 1);
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader, &raw) != REDIS_OK)
      break;
    if (raw == nullptr)
      break;
    expected.emplace_back(static_cast<redisReply*>(raw));
  }
  redisReaderFree(reader);

  size_t read = 0;
  fuzz::for_each_reply(data, size, [&](redis::ReplyPtr reply) {
    if (read >= expected.size() || !redis::same_reply(reply.get(), expected[read].get()))
      __builtin_trap();  // a reply hiredis did not read, or read otherwise
    ++read;
  });
  // Every reply hiredis read, up to its error if any: the chunked reader stops at the same byte.
  if (read != expected.size())
    __builtin_trap();
  return 0;
}
