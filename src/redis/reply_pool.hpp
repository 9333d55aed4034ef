#pragma once
// hiredis reply objects built in blocks recycled per thread: a block holds the reply, up to
// four array elements and a short string, so a typical limiter reply (an array of a few
// integers) costs no malloc or free once the thread has read a few. Every reply rlcheck owns
// (ReplyPtr) comes from these builders and goes back through free_reply, never hiredis'
// freeReplyObject.

#include <cstddef>

#include <hiredis/read.h>

struct redisReply;

namespace rlcheck::redis {

// The reader's object functions, building pooled replies. Each function sets the new object
// in its parent array, as hiredis' own do.
redisReplyObjectFunctions pooled_reply_functions();

// An integer reply (`array` false, one value) or an array of at most four integers, in one
// pooled block: the reply reader's scanner builds these. Null when out of memory.
redisReply* pooled_integers(const long long* values, size_t count, bool array);

// Frees `reply` (null: nothing) and its elements, keeping the blocks for the next replies.
void free_reply(void* reply);

}  // namespace rlcheck::redis
