#pragma once
// The reply of a limiter script, in each shape --reply reads: rlcheck's own contract (an
// integer, 1 allowed or 0 denied, or an array {allowed, remaining?, retry_ms?} of integers) and
// the shapes popular libraries ship, so their scripts run unwrapped:
//   counter  {hits, ttl_ms}: allowed when hits <= the limit; when denied the hint is ttl_ms, a
//            PTTL (-1: the key never expires, no hint; -2: the key is gone, retry now). The
//            INCR + PEXPIRE stores of express-rate-limit and rate-limiter-flexible.
//   cell     {limited, limit, remaining, retry_after_s, reset_after_s} of integers: redis-cell's
//            CL.THROTTLE; limited 0 is allowed; the hint is retry_after_s (-1: none).
//   rate     {allowed, remaining, retry_after, reset_after}, numbers or numeric strings (Lua
//            truncates numbers in replies, so go-redis' redis_rate sends tostring()s): allowed
//            when allowed > 0; retry_after in seconds with fractions, -1 meaning none.
//   count    a bare hit count (an integer): allowed while it is at most the limit; no hint.
// A Lua false (or a bare nil) reaches rlcheck as a nil reply: a denial where the format has a
// place for it (contract: the reply or its allowed slot; rate: its allowed slot; count: the
// reply). counter and cell have none (cell's "limited" false would mean allowed).

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include <hiredis/hiredis.h>

#include "config/config.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::redis {

// The decision a contract-shaped reply states, or what is wrong with its shape ("returned
// string \"ok\""). hint_expected is set when the array has a retry_ms slot.
std::expected<engine::Decision, std::string> decision_from_script_reply(const redisReply& reply);

// The decision a reply of `format` states; `limit` is the L counter replies are held to. The
// error says what is wrong with the reply ("returned an array whose ttl_ms is nil").
std::expected<engine::Decision, std::string> decision_from_reply(config::ReplyFormat format,
                                                                 int64_t limit,
                                                                 const redisReply& reply);

// The same, written into `out` (a default Decision): the run loop's form, which moves no
// Decision around.
std::expected<void, std::string> read_decision(config::ReplyFormat format, int64_t limit,
                                               const redisReply& reply, engine::Decision& out);

// A reply `format` could not read, that another --reply reads: " (--reply count reads it: a
// hit count, allowed while at most --limit)", else "". Tried in the order count, counter,
// cell, rate (the first that reads it wins); for the error's message, never per good reply.
std::string reply_that_reads(config::ReplyFormat format, int64_t limit, const redisReply& reply);

// The shape `format` expects, for messages: "{hits, ttl_ms} of integers (--reply counter)".
std::string_view expected_reply_shape(config::ReplyFormat format);

// The resolution of the retry hint each format carries, in milliseconds: 1 where the hint is
// in milliseconds (contract, counter) or fractions of a second (rate, kept to the millisecond),
// 1000 where it is whole seconds (cell). The one place that says so, for the retry-accuracy
// tolerance of a hint (ScriptStrategy sets Decision::hint_resolution_ms from it).
int64_t hint_resolution_ms(config::ReplyFormat format);

}  // namespace rlcheck::redis
