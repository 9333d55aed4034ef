#include <doctest/doctest.h>

#include <string>

#include "redis/script_reply.hpp"
#include "reply_builder.hpp"

using rlcheck::engine::Outcome;
using rlcheck::redis::decision_from_script_reply;
using rlcheck::test::ReplyBuilder;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a bare integer 1 allows and 0 denies, with no hint expected") {
  redisReply one{};
  one.type = REDIS_REPLY_INTEGER;
  one.integer = 1;
  auto allowed = decision_from_script_reply(one);
  REQUIRE(allowed.has_value());
  CHECK(allowed->outcome == Outcome::allowed);
  CHECK_FALSE(allowed->hint_expected);
  CHECK_FALSE(allowed->retry_ms.has_value());
  CHECK_FALSE(allowed->remaining.has_value());

  redisReply zero{};
  zero.type = REDIS_REPLY_INTEGER;
  zero.integer = 0;
  auto denied = decision_from_script_reply(zero);
  REQUIRE(denied.has_value());
  CHECK(denied->outcome == Outcome::denied);
  CHECK_FALSE(denied->hint_expected);
  CHECK_FALSE(denied->retry_ms.has_value());
}

TEST_CASE("an array of one integer is the allowed flag alone") {
  ReplyBuilder b;
  auto d = decision_from_script_reply(b.integers({0}));
  REQUIRE(d.has_value());
  CHECK(d->outcome == Outcome::denied);
  CHECK_FALSE(d->hint_expected);
  CHECK_FALSE(d->remaining.has_value());
}

TEST_CASE("an array of two integers adds remaining, without a hint slot") {
  ReplyBuilder b;
  auto d = decision_from_script_reply(b.integers({1, 7}));
  REQUIRE(d.has_value());
  CHECK(d->outcome == Outcome::allowed);
  CHECK(d->remaining == 7);
  CHECK_FALSE(d->hint_expected);
  CHECK_FALSE(d->retry_ms.has_value());

  auto denied = decision_from_script_reply(b.integers({0, 0}));
  REQUIRE(denied.has_value());
  CHECK(denied->outcome == Outcome::denied);
  CHECK_FALSE(denied->hint_expected);
}

TEST_CASE("an array of three integers carries retry_ms and expects a hint") {
  ReplyBuilder b;
  auto denied = decision_from_script_reply(b.integers({0, 0, 1500}));
  REQUIRE(denied.has_value());
  CHECK(denied->outcome == Outcome::denied);
  CHECK(denied->remaining == 0);
  CHECK(denied->retry_ms == 1500);
  CHECK(denied->hint_expected);

  // A negative hint is passed through for the retry-after-valid check to judge.
  auto negative = decision_from_script_reply(b.integers({0, 0, -20}));
  REQUIRE(negative.has_value());
  CHECK(negative->retry_ms == -20);

  // An admission needs no retry hint, whatever the slot holds.
  auto allowed = decision_from_script_reply(b.integers({1, 4, 0}));
  REQUIRE(allowed.has_value());
  CHECK(allowed->outcome == Outcome::allowed);
  CHECK(allowed->remaining == 4);
  CHECK_FALSE(allowed->retry_ms.has_value());
  CHECK(allowed->hint_expected);
}

TEST_CASE("allowed must be 1 or 0") {
  ReplyBuilder b;
  auto two = decision_from_script_reply(b.integer(2));
  REQUIRE_FALSE(two.has_value());
  CHECK(mentions(two.error(), "2"));
  CHECK(mentions(two.error(), "not 1 or 0"));

  CHECK_FALSE(decision_from_script_reply(b.integer(-1)).has_value());
  auto in_array = decision_from_script_reply(b.integers({2, 0, 0}));
  REQUIRE_FALSE(in_array.has_value());
  CHECK(mentions(in_array.error(), "not 1 or 0"));
}

TEST_CASE("string, status and error replies are described in the error") {
  ReplyBuilder b;
  auto string = decision_from_script_reply(b.string("ok"));
  REQUIRE_FALSE(string.has_value());
  CHECK(mentions(string.error(), "string \"ok\""));

  auto status = decision_from_script_reply(b.status("OK"));
  REQUIRE_FALSE(status.has_value());
  CHECK(mentions(status.error(), "status"));

  // A numeric string is still not an integer reply.
  CHECK_FALSE(decision_from_script_reply(b.string("1")).has_value());
}

TEST_CASE("array elements must be integers, and the error names the slot") {
  ReplyBuilder b;
  auto flag = decision_from_script_reply(b.array({&b.string("1"), &b.integer(0)}));
  REQUIRE_FALSE(flag.has_value());
  CHECK(mentions(flag.error(), "allowed"));

  auto remaining = decision_from_script_reply(b.array({&b.integer(1), &b.string("x")}));
  REQUIRE_FALSE(remaining.has_value());
  CHECK(mentions(remaining.error(), "remaining"));

  auto retry = decision_from_script_reply(b.array({&b.integer(0), &b.integer(0), &b.nil()}));
  REQUIRE_FALSE(retry.has_value());
  CHECK(mentions(retry.error(), "retry_ms"));
  CHECK(mentions(retry.error(), "nil"));
}

TEST_CASE("empty arrays and arrays of four or more are refused") {
  ReplyBuilder b;
  auto empty = decision_from_script_reply(b.array({}));
  REQUIRE_FALSE(empty.has_value());
  CHECK(mentions(empty.error(), "array of 0"));

  auto four = decision_from_script_reply(b.integers({0, 0, 100, 5}));
  REQUIRE_FALSE(four.has_value());
  CHECK(mentions(four.error(), "array of 4"));
}

// --- the shapes libraries ship (--reply counter, cell, rate) ---

using rlcheck::config::ReplyFormat;
using rlcheck::redis::decision_from_reply;
using rlcheck::redis::expected_reply_shape;
using rlcheck::redis::hint_resolution_ms;

TEST_CASE("contract format is the reply contract above") {
  ReplyBuilder b;
  auto d = decision_from_reply(ReplyFormat::contract, 10, b.integers({0, 0, 1500}));
  REQUIRE(d.has_value());
  CHECK(d->outcome == Outcome::denied);
  CHECK(d->retry_ms == 1500);
  CHECK(mentions(std::string(expected_reply_shape(ReplyFormat::contract)), "retry_ms"));
}

TEST_CASE("counter: allowed while hits <= the limit; a denial's hint is the PTTL") {
  ReplyBuilder b;
  for (long long hits : {1LL, 10LL}) {
    auto allowed = decision_from_reply(ReplyFormat::counter, 10, b.integers({hits, 59'000}));
    REQUIRE(allowed.has_value());
    CHECK(allowed->outcome == Outcome::allowed);
    CHECK_FALSE(allowed->retry_ms.has_value());
    CHECK(allowed->hint_expected);
  }
  auto denied = decision_from_reply(ReplyFormat::counter, 10, b.integers({11, 42'500}));
  REQUIRE(denied.has_value());
  CHECK(denied->outcome == Outcome::denied);
  CHECK(denied->retry_ms == 42'500);
  CHECK(denied->hint_expected);
  CHECK_FALSE(denied->remaining.has_value());  // the shape does not say

  // The same reply under another limit.
  auto under_20 = decision_from_reply(ReplyFormat::counter, 20, b.integers({11, 42'500}));
  REQUIRE(under_20.has_value());
  CHECK(under_20->outcome == Outcome::allowed);
}

TEST_CASE("counter: PTTL -1 (no expiry) is no hint, -2 (key gone) is retry now") {
  ReplyBuilder b;
  auto forever = decision_from_reply(ReplyFormat::counter, 10, b.integers({11, -1}));
  REQUIRE(forever.has_value());
  CHECK(forever->outcome == Outcome::denied);
  CHECK_FALSE(forever->retry_ms.has_value());
  CHECK(forever->hint_expected);  // so retry-after-present reports the missing hint

  auto gone = decision_from_reply(ReplyFormat::counter, 10, b.integers({11, -2}));
  REQUIRE(gone.has_value());
  CHECK(gone->retry_ms == 0);

  // Not a PTTL value: passed on for retry-after-valid.
  auto odd = decision_from_reply(ReplyFormat::counter, 10, b.integers({11, -7}));
  REQUIRE(odd.has_value());
  CHECK(odd->retry_ms == -7);
}

TEST_CASE("counter: a wrong shape names the slot") {
  ReplyBuilder b;
  auto bare = decision_from_reply(ReplyFormat::counter, 10, b.integer(1));
  REQUIRE_FALSE(bare.has_value());
  CHECK(mentions(bare.error(), "integer 1"));

  auto three = decision_from_reply(ReplyFormat::counter, 10, b.integers({1, 0, 0}));
  REQUIRE_FALSE(three.has_value());
  CHECK(mentions(three.error(), "array of 3"));

  auto ttl = decision_from_reply(ReplyFormat::counter, 10, b.array({&b.integer(3), &b.nil()}));
  REQUIRE_FALSE(ttl.has_value());
  CHECK(mentions(ttl.error(), "ttl_ms is nil"));

  auto hits =
      decision_from_reply(ReplyFormat::counter, 10, b.array({&b.string("3"), &b.integer(9)}));
  REQUIRE_FALSE(hits.has_value());
  CHECK(mentions(hits.error(), "hits is string \"3\""));
  CHECK(mentions(std::string(expected_reply_shape(ReplyFormat::counter)), "--reply counter"));
}

TEST_CASE("cell: limited 0 allows; a denial waits retry_after_s whole seconds") {
  ReplyBuilder b;
  auto allowed = decision_from_reply(ReplyFormat::cell, 10, b.integers({0, 10, 9, -1, 6}));
  REQUIRE(allowed.has_value());
  CHECK(allowed->outcome == Outcome::allowed);
  CHECK(allowed->remaining == 9);
  CHECK_FALSE(allowed->retry_ms.has_value());
  CHECK(allowed->hint_expected);

  auto denied = decision_from_reply(ReplyFormat::cell, 10, b.integers({1, 10, 0, 6, 60}));
  REQUIRE(denied.has_value());
  CHECK(denied->outcome == Outcome::denied);
  CHECK(denied->remaining == 0);
  CHECK(denied->retry_ms == 6000);

  auto no_hint = decision_from_reply(ReplyFormat::cell, 10, b.integers({1, 10, 0, -1, 60}));
  REQUIRE(no_hint.has_value());
  CHECK_FALSE(no_hint->retry_ms.has_value());
  CHECK(hint_resolution_ms(ReplyFormat::cell) == 1000);
}

TEST_CASE("cell: a wrong shape names the slot and the format") {
  ReplyBuilder b;
  auto short_array = decision_from_reply(ReplyFormat::cell, 10, b.integers({1, 10, 0, 6}));
  REQUIRE_FALSE(short_array.has_value());
  CHECK(mentions(short_array.error(), "array of 4"));

  auto limited = decision_from_reply(ReplyFormat::cell, 10, b.integers({2, 10, 0, 6, 60}));
  REQUIRE_FALSE(limited.has_value());
  CHECK(mentions(limited.error(), "limited is 2, not 1 or 0"));

  auto seconds = decision_from_reply(
      ReplyFormat::cell, 10,
      b.array({&b.integer(1), &b.integer(10), &b.integer(0), &b.string("6.5"), &b.integer(60)}));
  REQUIRE_FALSE(seconds.has_value());
  CHECK(mentions(seconds.error(), "retry_after_s is string \"6.5\""));
  CHECK(mentions(std::string(expected_reply_shape(ReplyFormat::cell)), "--reply cell"));
}

TEST_CASE("rate: allowed is a count; retry_after is seconds with fractions, numbers or strings") {
  ReplyBuilder b;
  auto allowed = decision_from_reply(
      ReplyFormat::rate, 10,
      b.array({&b.integer(1), &b.integer(9), &b.string("-1"), &b.string("0.1")}));
  REQUIRE(allowed.has_value());
  CHECK(allowed->outcome == Outcome::allowed);
  CHECK(allowed->remaining == 9);
  CHECK_FALSE(allowed->retry_ms.has_value());
  CHECK(allowed->hint_expected);

  auto denied = decision_from_reply(
      ReplyFormat::rate, 10,
      b.array({&b.integer(0), &b.integer(0), &b.string("0.25"), &b.string("5.75")}));
  REQUIRE(denied.has_value());
  CHECK(denied->outcome == Outcome::denied);
  CHECK(denied->retry_ms == 250);

  // Rounded up to the millisecond: a client told 0.2501 s may not retry at 250 ms.
  auto fraction = decision_from_reply(
      ReplyFormat::rate, 10,
      b.array({&b.string("0"), &b.string("0"), &b.string("0.2501"), &b.string("1")}));
  REQUIRE(fraction.has_value());
  CHECK(fraction->retry_ms == 251);
  auto binary = decision_from_reply(
      ReplyFormat::rate, 10,
      b.array({&b.integer(0), &b.integer(0), &b.string("0.3"), &b.string("1")}));
  REQUIRE(binary.has_value());
  CHECK(binary->retry_ms == 300);  // not 301: 0.3 x 1000 is 300.00000000000006 in binary

  // Integers (a Lua number, truncated) and the exponent form tostring writes.
  auto integer = decision_from_reply(ReplyFormat::rate, 10, b.integers({0, 0, 3, 3}));
  REQUIRE(integer.has_value());
  CHECK(integer->retry_ms == 3000);
  auto tiny = decision_from_reply(
      ReplyFormat::rate, 10,
      b.array({&b.integer(0), &b.integer(0), &b.string("1e-05"), &b.integer(1)}));
  REQUIRE(tiny.has_value());
  CHECK(tiny->retry_ms == 1);

  // A cost above 1 is still allowed; -1 means no hint.
  auto cost = decision_from_reply(ReplyFormat::rate, 10, b.integers({3, 7, -1, 1}));
  REQUIRE(cost.has_value());
  CHECK(cost->outcome == Outcome::allowed);
  auto none = decision_from_reply(ReplyFormat::rate, 10, b.integers({0, 0, -1, 1}));
  REQUIRE(none.has_value());
  CHECK_FALSE(none->retry_ms.has_value());
  CHECK(hint_resolution_ms(ReplyFormat::rate) == 1);
}

TEST_CASE("rate: a wrong shape names the slot and the format") {
  ReplyBuilder b;
  auto words = decision_from_reply(
      ReplyFormat::rate, 10,
      b.array({&b.integer(0), &b.integer(0), &b.string("soon"), &b.string("1")}));
  REQUIRE_FALSE(words.has_value());
  CHECK(mentions(words.error(), "retry_after is string \"soon\", not a number"));

  auto trailing = decision_from_reply(
      ReplyFormat::rate, 10,
      b.array({&b.integer(0), &b.integer(0), &b.string("0.5s"), &b.string("1")}));
  REQUIRE_FALSE(trailing.has_value());
  CHECK(mentions(trailing.error(), "retry_after"));

  auto nan = decision_from_reply(
      ReplyFormat::rate, 10,
      b.array({&b.integer(0), &b.integer(0), &b.string("nan"), &b.string("1")}));
  REQUIRE_FALSE(nan.has_value());

  auto negative = decision_from_reply(ReplyFormat::rate, 10, b.integers({-1, 0, -1, 1}));
  REQUIRE_FALSE(negative.has_value());
  CHECK(mentions(negative.error(), "allowed is -1, not a count"));

  auto nil = decision_from_reply(ReplyFormat::rate, 10,
                                 b.array({&b.integer(1), &b.nil(), &b.integer(-1), &b.integer(1)}));
  REQUIRE_FALSE(nil.has_value());
  CHECK(mentions(nil.error(), "remaining is nil"));

  auto contract_shape = decision_from_reply(ReplyFormat::rate, 10, b.integers({0, 0, 1500}));
  REQUIRE_FALSE(contract_shape.has_value());
  CHECK(mentions(contract_shape.error(), "array of 3"));
  CHECK(mentions(std::string(expected_reply_shape(ReplyFormat::rate)), "--reply rate"));
}

TEST_CASE("hint resolution: milliseconds for contract and counter, whole seconds for cell") {
  CHECK(hint_resolution_ms(ReplyFormat::contract) == 1);
  CHECK(hint_resolution_ms(ReplyFormat::counter) == 1);
  CHECK(hint_resolution_ms(ReplyFormat::cell) == 1000);
  CHECK(hint_resolution_ms(ReplyFormat::rate) == 1);
}

TEST_CASE("a Lua false (a nil reply) is a denial where the format has a place for it") {
  ReplyBuilder b;
  // contract: return false, or {false, remaining, retry_ms}.
  auto bare = decision_from_script_reply(b.nil());
  REQUIRE(bare.has_value());
  CHECK(bare->outcome == Outcome::denied);
  CHECK_FALSE(bare->hint_expected);
  auto slot = decision_from_script_reply(b.array({&b.nil(), &b.integer(0), &b.integer(250)}));
  REQUIRE(slot.has_value());
  CHECK(slot->outcome == Outcome::denied);
  CHECK(slot->retry_ms == 250);
  CHECK(decision_from_reply(ReplyFormat::contract, 10, b.nil())->outcome == Outcome::denied);

  // rate: {false, remaining, retry_after, reset_after}.
  auto rate = decision_from_reply(
      ReplyFormat::rate, 10, b.array({&b.nil(), &b.integer(0), &b.string("1.5"), &b.integer(2)}));
  REQUIRE(rate.has_value());
  CHECK(rate->outcome == Outcome::denied);
  CHECK(rate->retry_ms == 1500);

  // count: return false.
  auto count = decision_from_reply(ReplyFormat::count, 10, b.nil());
  REQUIRE(count.has_value());
  CHECK(count->outcome == Outcome::denied);

  // counter and cell have no such place: a nil there is still a wrong reply.
  CHECK_FALSE(decision_from_reply(ReplyFormat::counter, 10, b.nil()).has_value());
  CHECK_FALSE(decision_from_reply(ReplyFormat::cell, 10, b.nil()).has_value());
  auto cell = decision_from_reply(
      ReplyFormat::cell, 10,
      b.array({&b.nil(), &b.integer(10), &b.integer(0), &b.integer(-1), &b.integer(1)}));
  CHECK_FALSE(cell.has_value());
}

TEST_CASE("--reply count: a bare hit count, allowed while at most the limit") {
  ReplyBuilder b;
  for (long long hits : {1LL, 9LL, 10LL}) {
    auto d = decision_from_reply(ReplyFormat::count, 10, b.integer(hits));
    REQUIRE(d.has_value());
    CHECK(d->outcome == Outcome::allowed);
    CHECK_FALSE(d->hint_expected);
    CHECK_FALSE(d->retry_ms.has_value());
  }
  auto over = decision_from_reply(ReplyFormat::count, 10, b.integer(11));
  REQUIRE(over.has_value());
  CHECK(over->outcome == Outcome::denied);
  CHECK_FALSE(over->hint_expected);

  auto negative = decision_from_reply(ReplyFormat::count, 10, b.integer(-1));
  REQUIRE_FALSE(negative.has_value());
  CHECK(mentions(negative.error(), "not a count"));
  auto array = decision_from_reply(ReplyFormat::count, 10, b.integers({3, 1000}));
  REQUIRE_FALSE(array.has_value());
  CHECK(mentions(array.error(), "array of 2"));
  CHECK(mentions(std::string(expected_reply_shape(ReplyFormat::count)), "--reply count"));
  CHECK(hint_resolution_ms(ReplyFormat::count) == 1);
}

TEST_CASE("a reply one --reply cannot read names the --reply that reads it") {
  using rlcheck::config::ReplyFormat;
  using rlcheck::redis::reply_that_reads;
  ReplyBuilder b;
  // A bare INCR count, read as the contract: 5 is not 1 or 0, but it is a hit count.
  const auto& count = b.integer(5);
  CHECK_FALSE(decision_from_script_reply(count).has_value());
  CHECK(mentions(reply_that_reads(ReplyFormat::contract, 10, count), "--reply count reads it"));
  // {hits, ttl_ms}: the counter stores' reply.
  CHECK(mentions(reply_that_reads(ReplyFormat::contract, 10, b.integers({12, 60000})),
                 "--reply counter"));
  // CL.THROTTLE's five integers.
  CHECK(mentions(reply_that_reads(ReplyFormat::count, 10, b.integers({0, 10, 9, -1, 6})),
                 "--reply cell"));
  // A reply no format reads names none.
  CHECK(reply_that_reads(ReplyFormat::contract, 10, b.string("ok")).empty());
}
