#pragma once
// Ownership and description of hiredis replies.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <hiredis/hiredis.h>

#include "redis/reply_pool.hpp"

namespace rlcheck::redis {

struct ReplyFree {
  void operator()(redisReply* reply) const { free_reply(reply); }
};
// A reply this code owns, built by the reader's pooled functions (reply_pool.hpp).
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

// A short description for messages: integer 5, string "abc", error "ERR ...", array of 2, nil.
// String replies longer than 80 characters are cut ("..."); errors and statuses are whole.
std::string describe_reply(const redisReply* reply);

// Whether two replies hold the same: type, value and elements, all levels down.
bool same_reply(const redisReply* a, const redisReply* b);

bool is_error(const redisReply* reply);
bool is_noscript(const redisReply* reply);  // the script cache lost the script (restart, flush)

// TIME's answer (seconds and microseconds, as two strings) in Unix nanoseconds; nullopt for
// any other reply.
std::optional<int64_t> time_reply_ns(const redisReply* reply);

}  // namespace rlcheck::redis
