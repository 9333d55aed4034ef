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

TEST_CASE("string, status, nil and error replies are described in the error") {
  ReplyBuilder b;
  auto string = decision_from_script_reply(b.string("ok"));
  REQUIRE_FALSE(string.has_value());
  CHECK(mentions(string.error(), "string \"ok\""));

  auto status = decision_from_script_reply(b.status("OK"));
  REQUIRE_FALSE(status.has_value());
  CHECK(mentions(status.error(), "status"));

  auto nil = decision_from_script_reply(b.nil());
  REQUIRE_FALSE(nil.has_value());
  CHECK(mentions(nil.error(), "nil"));

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
