#include "redis/script_reply.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "redis/reply.hpp"

namespace rlcheck::redis {
namespace {

using config::ReplyFormat;
using engine::Decision;
using engine::Outcome;
using Result = std::expected<Decision, std::string>;

// A Lua false (or nil) reaches rlcheck as a nil reply: a denial where a format allows it.
bool is_nil(const redisReply& reply) {
  return reply.type == REDIS_REPLY_NIL;
}

std::expected<bool, std::string> allowed_flag(const redisReply& reply) {
  if (is_nil(reply))
    return false;
  if (reply.type != REDIS_REPLY_INTEGER) {
    return std::unexpected(fmt::format("allowed is {}", describe_reply(&reply)));
  }
  if (reply.integer != 0 && reply.integer != 1) {
    return std::unexpected(fmt::format("allowed is {}, not 1 or 0", reply.integer));
  }
  return reply.integer == 1;
}

// An array of exactly `size` elements, else why not ("returned integer 1").
std::expected<void, std::string> array_of(const redisReply& reply, size_t size) {
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements != size)
    return std::unexpected(fmt::format("returned {}", describe_reply(&reply)));
  return {};
}

// Element `index` of an array, named `slot` in the error, as an integer reply.
std::expected<int64_t, std::string> integer_slot(const redisReply& array, size_t index,
                                                 std::string_view slot) {
  const redisReply& element = *array.element[index];
  if (element.type != REDIS_REPLY_INTEGER) {
    return std::unexpected(
        fmt::format("returned an array whose {} is {}", slot, describe_reply(&element)));
  }
  return element.integer;
}

// Element `index` as a number: an integer, or a string that is a whole decimal number ("0.25",
// "-1", "1e-05": what Lua's tostring writes).
std::expected<double, std::string> number_slot(const redisReply& array, size_t index,
                                               std::string_view slot) {
  const redisReply& element = *array.element[index];
  std::optional<double> value;
  if (element.type == REDIS_REPLY_INTEGER) {
    value = static_cast<double>(element.integer);
  } else if (element.type == REDIS_REPLY_STRING || element.type == REDIS_REPLY_STATUS) {
    double parsed = 0;
    const char* end = element.str + element.len;
    const auto [stop, error] = std::from_chars(element.str, end, parsed);
    if (error == std::errc{} && stop == end && element.len > 0)
      value = parsed;
  }
  if (!value || !std::isfinite(*value)) {
    return std::unexpected(fmt::format("returned an array whose {} is {}, not a number", slot,
                                       describe_reply(&element)));
  }
  return *value;
}

// A hint in seconds as milliseconds, rounded up: a client told 0.2501 s may not retry at 250 ms.
// Rounded to the microsecond first, so that 0.3 s (0.29999... in binary) stays 300 ms.
std::expected<int64_t, std::string> seconds_to_ms(double seconds, std::string_view slot) {
  const double ms = std::ceil(std::round(seconds * 1e6) / 1000.0);
  if (std::fabs(ms) > static_cast<double>(std::numeric_limits<int64_t>::max() / 2))
    return std::unexpected(fmt::format("returned an array whose {} is out of range", slot));
  return static_cast<int64_t>(ms);
}

Decision decided(bool allowed) {
  Decision decision;
  decision.outcome = allowed ? Outcome::allowed : Outcome::denied;
  decision.hint_expected = true;  // every library shape has a place for the wait
  return decision;
}

// {hits, ttl_ms}. ttl_ms is what PTTL said: -1 (no expiry) leaves the denial without a hint,
// for retry-after-present and key-ttl to report; -2 (no key: the count restarted) is "now".
// Any other negative is passed on for retry-after-valid to judge.
Result counter_decision(const redisReply& reply, int64_t limit) {
  if (auto shape = array_of(reply, 2); !shape)
    return std::unexpected(shape.error());
  auto hits = integer_slot(reply, 0, "hits");
  if (!hits)
    return std::unexpected(hits.error());
  auto ttl_ms = integer_slot(reply, 1, "ttl_ms");
  if (!ttl_ms)
    return std::unexpected(ttl_ms.error());
  Decision decision = decided(*hits <= limit);
  if (decision.outcome == Outcome::denied && *ttl_ms != -1)
    decision.retry_ms = *ttl_ms == -2 ? 0 : *ttl_ms;
  return decision;
}

// {limited, limit, remaining, retry_after_s, reset_after_s}, as CL.THROTTLE replies.
Result cell_decision(const redisReply& reply) {
  if (auto shape = array_of(reply, 5); !shape)
    return std::unexpected(shape.error());
  constexpr std::string_view k_slots[] = {"limited", "limit", "remaining", "retry_after_s",
                                          "reset_after_s"};
  int64_t values[5] = {};
  for (size_t i = 0; i < 5; ++i) {
    auto value = integer_slot(reply, i, k_slots[i]);
    if (!value)
      return std::unexpected(value.error());
    values[i] = *value;
  }
  const int64_t limited = values[0];
  if (limited != 0 && limited != 1) {
    return std::unexpected(
        fmt::format("returned an array whose limited is {}, not 1 or 0", limited));
  }
  Decision decision = decided(limited == 0);
  decision.remaining = values[2];
  const int64_t retry_after_s = values[3];
  if (decision.outcome == Outcome::denied && retry_after_s != -1) {
    auto retry_ms = seconds_to_ms(static_cast<double>(retry_after_s), "retry_after_s");
    if (!retry_ms)
      return std::unexpected(retry_ms.error());
    decision.retry_ms = *retry_ms;
  }
  return decision;
}

// {allowed, remaining, retry_after, reset_after}, as redis_rate's scripts reply: allowed is
// the count admitted (the request's cost), 0 (or a Lua false) when denied.
Result rate_decision(const redisReply& reply) {
  if (auto shape = array_of(reply, 4); !shape)
    return std::unexpected(shape.error());
  constexpr std::string_view k_slots[] = {"allowed", "remaining", "retry_after", "reset_after"};
  double values[4] = {};
  for (size_t i = 0; i < 4; ++i) {
    if (i == 0 && is_nil(*reply.element[0]))
      continue;  // false: denied
    auto value = number_slot(reply, i, k_slots[i]);
    if (!value)
      return std::unexpected(value.error());
    values[i] = *value;
  }
  const double allowed = values[0];
  if (allowed < 0 || allowed != std::floor(allowed)) {
    return std::unexpected(
        fmt::format("returned an array whose allowed is {}, not a count (0 when denied)", allowed));
  }
  Decision decision = decided(allowed > 0);
  decision.remaining = static_cast<int64_t>(std::floor(values[1]));
  const double retry_after = values[2];
  if (decision.outcome == Outcome::denied && retry_after != -1) {
    auto retry_ms = seconds_to_ms(retry_after, "retry_after");
    if (!retry_ms)
      return std::unexpected(retry_ms.error());
    decision.retry_ms = *retry_ms;
  }
  return decision;
}

// A bare hit count: allowed while it is at most the limit; a Lua false or nil is a denial.
// No place for a hint.
Result count_decision(const redisReply& reply, int64_t limit) {
  Decision decision;
  if (is_nil(reply)) {
    decision.outcome = Outcome::denied;
    return decision;
  }
  if (reply.type != REDIS_REPLY_INTEGER)
    return std::unexpected(fmt::format("returned {}", describe_reply(&reply)));
  if (reply.integer < 0)
    return std::unexpected(fmt::format("returned {}, not a count", reply.integer));
  decision.outcome = reply.integer <= limit ? Outcome::allowed : Outcome::denied;
  return decision;
}

}  // namespace

namespace {

// decision_from_script_reply, into `decision`.
std::expected<void, std::string> read_script_reply(const redisReply& reply, Decision& decision) {
  if (is_nil(reply)) {
    decision.outcome = Outcome::denied;  // return false
    return {};
  }
  if (reply.type == REDIS_REPLY_INTEGER) {
    auto allowed = allowed_flag(reply);
    if (!allowed)
      return std::unexpected(fmt::format("returned {}", allowed.error()));
    decision.outcome = *allowed ? Outcome::allowed : Outcome::denied;
    return {};
  }
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements == 0 || reply.elements > 3) {
    return std::unexpected(fmt::format("returned {}", describe_reply(&reply)));
  }
  auto allowed = allowed_flag(*reply.element[0]);
  if (!allowed)
    return std::unexpected(fmt::format("returned an array whose {}", allowed.error()));
  decision.outcome = *allowed ? Outcome::allowed : Outcome::denied;
  for (size_t i = 1; i < reply.elements; ++i) {
    const redisReply& element = *reply.element[i];
    if (element.type != REDIS_REPLY_INTEGER) {
      return std::unexpected(fmt::format("returned an array whose {} is {}",
                                         i == 1 ? "remaining" : "retry_ms",
                                         describe_reply(&element)));
    }
    if (i == 1)
      decision.remaining = element.integer;
    if (i == 2 && decision.outcome == Outcome::denied)
      decision.retry_ms = element.integer;
  }
  decision.hint_expected = reply.elements == 3;
  return {};
}

}  // namespace

Result decision_from_script_reply(const redisReply& reply) {
  Decision decision;
  if (auto read = read_script_reply(reply, decision); !read)
    return std::unexpected(std::move(read.error()));
  return decision;
}

std::expected<void, std::string> read_decision(ReplyFormat format, int64_t limit,
                                               const redisReply& reply, Decision& out) {
  if (format == ReplyFormat::contract)
    return read_script_reply(reply, out);
  auto decision = decision_from_reply(format, limit, reply);
  if (!decision)
    return std::unexpected(std::move(decision.error()));
  out = std::move(*decision);
  return {};
}

Result decision_from_reply(ReplyFormat format, int64_t limit, const redisReply& reply) {
  switch (format) {
    case ReplyFormat::contract:
      return decision_from_script_reply(reply);
    case ReplyFormat::counter:
      return counter_decision(reply, limit);
    case ReplyFormat::cell:
      return cell_decision(reply);
    case ReplyFormat::rate:
      return rate_decision(reply);
    case ReplyFormat::count:
      return count_decision(reply, limit);
  }
  return std::unexpected("has an unknown reply format");
}

std::string reply_that_reads(ReplyFormat format, int64_t limit, const redisReply& reply) {
  struct Other {
    ReplyFormat format;
    const char* name;
    const char* reading;
  };
  static constexpr Other k_others[] = {
      {ReplyFormat::count, "count", "a hit count, allowed while at most --limit"},
      {ReplyFormat::counter, "counter", "{hits, ttl_ms}, allowed while hits are at most --limit"},
      {ReplyFormat::cell, "cell",
       "CL.THROTTLE's {limited, limit, remaining, retry_after_s, "
       "reset_after_s}"},
      {ReplyFormat::rate, "rate", "redis_rate's {allowed, remaining, retry_after, reset_after}"},
      {ReplyFormat::contract, "contract", "1, 0 or {allowed, remaining, retry_ms}"},
  };
  for (const Other& other : k_others) {
    if (other.format != format && decision_from_reply(other.format, limit, reply))
      return fmt::format(" (--reply {} reads it: {})", other.name, other.reading);
  }
  return "";
}

std::string_view expected_reply_shape(ReplyFormat format) {
  switch (format) {
    case ReplyFormat::contract:
      return "1, 0 (or false) or {allowed, remaining, retry_ms}";
    case ReplyFormat::counter:
      return "{hits, ttl_ms} of integers (--reply counter)";
    case ReplyFormat::cell:
      return "{limited, limit, remaining, retry_after_s, reset_after_s} of integers (--reply "
             "cell)";
    case ReplyFormat::rate:
      return "{allowed, remaining, retry_after, reset_after}, numbers or numeric strings "
             "(--reply rate)";
    case ReplyFormat::count:
      return "a hit count, or false when denied (--reply count)";
  }
  return "";
}

int64_t hint_resolution_ms(ReplyFormat format) {
  return format == ReplyFormat::cell ? 1000 : 1;
}

}  // namespace rlcheck::redis
