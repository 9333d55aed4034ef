// Fuzzes the reply contract of limiter scripts and the library shapes --reply reads
// (contract, counter, cell, rate): every reply read from the bytes is judged in every format.
#include <cstddef>
#include <cstdint>

#include "config/reply_format.hpp"
#include "redis/script_reply.hpp"
#include "resp_input.hpp"

using namespace rlcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::for_each_reply(data, size, [](redis::ReplyPtr reply) {
    (void)redis::decision_from_script_reply(*reply);
    for (auto format : {config::ReplyFormat::contract, config::ReplyFormat::counter,
                        config::ReplyFormat::cell, config::ReplyFormat::rate}) {
      for (int64_t limit : {int64_t{0}, int64_t{10}, INT64_MAX})
        (void)redis::decision_from_reply(format, limit, *reply);
    }
  });
  return 0;
}
