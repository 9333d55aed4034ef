#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "recording_io.hpp"
#include "redis/strategy.hpp"
#include "reply_builder.hpp"

using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::redis::DecisionIo;
using rlcheck::redis::LoadedScript;
using rlcheck::redis::make_strategy;
using rlcheck::redis::RequestState;
using rlcheck::redis::StrategyParams;
using rlcheck::test::RecordingIo;
using rlcheck::test::ReplyBuilder;
using Kind = rlcheck::config::Strategy;
using Command = std::vector<std::string>;

namespace {

StrategyParams params_for(Kind kind) {
  StrategyParams params;
  params.kind = kind;
  params.key = "rl:test";
  params.limit = 10;
  params.window_ms = 60'000;
  return params;
}

int64_t wall_ms() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
}

}  // namespace

TEST_CASE("naive: a first request reads, increments, sets the expiry and is allowed") {
  auto strategy = make_strategy(params_for(Kind::naive));
  REQUIRE(strategy);
  CHECK(strategy->script() == nullptr);
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  REQUIRE(io.sent == std::vector<Command>{{"GET", "rl:test"}});

  CHECK_FALSE(strategy->on_reply(state, b.nil(), io).has_value());
  REQUIRE(io.sent.size() == 2);
  CHECK(io.sent[1] == Command{"INCR", "rl:test"});

  CHECK_FALSE(strategy->on_reply(state, b.integer(1), io).has_value());
  REQUIRE(io.sent.size() == 3);
  CHECK(io.sent[2] == Command{"PEXPIRE", "rl:test", "60000"});

  auto decision = strategy->on_reply(state, b.integer(1), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::allowed);
  CHECK(io.sent.size() == 3);
  CHECK(io.evals.empty());
}

TEST_CASE("naive: below the limit a later request increments without a new expiry") {
  auto strategy = make_strategy(params_for(Kind::naive));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  CHECK_FALSE(strategy->on_reply(state, b.string("3"), io).has_value());
  auto decision = strategy->on_reply(state, b.integer(4), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::allowed);
  CHECK(io.sent == std::vector<Command>{{"GET", "rl:test"}, {"INCR", "rl:test"}});
}

TEST_CASE("naive: a counter at the limit is denied without a hint or a write") {
  auto strategy = make_strategy(params_for(Kind::naive));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  auto decision = strategy->on_reply(state, b.string("10"), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::denied);
  CHECK_FALSE(decision->hint_expected);
  CHECK_FALSE(decision->retry_ms.has_value());
  CHECK(io.sent.size() == 1);
}

TEST_CASE("naive: a GET reply that is no number is a bad reply") {
  auto strategy = make_strategy(params_for(Kind::naive));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  auto decision = strategy->on_reply(state, b.string("ten"), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::error);
  CHECK(decision->error == ErrorKind::bad_reply);
  CHECK(decision->error_message.find("GET") != std::string::npos);
}

TEST_CASE("incr-expire: the first increment sets the expiry and is allowed") {
  auto strategy = make_strategy(params_for(Kind::incr_expire));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  REQUIRE(io.sent == std::vector<Command>{{"INCR", "rl:test"}});
  CHECK_FALSE(strategy->on_reply(state, b.integer(1), io).has_value());
  REQUIRE(io.sent.size() == 2);
  CHECK(io.sent[1] == Command{"PEXPIRE", "rl:test", "60000"});
  auto decision = strategy->on_reply(state, b.integer(1), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::allowed);
}

TEST_CASE("incr-expire: counts up to the limit are allowed with one command") {
  auto strategy = make_strategy(params_for(Kind::incr_expire));
  ReplyBuilder b;
  for (long long count : {2, 10}) {
    CAPTURE(count);
    RecordingIo io;
    RequestState state;
    strategy->begin(state, io);
    auto decision = strategy->on_reply(state, b.integer(count), io);
    REQUIRE(decision.has_value());
    CHECK(decision->outcome == Outcome::allowed);
    CHECK(io.sent.size() == 1);
  }
}

TEST_CASE("incr-expire: over the limit asks PTTL and denies with it as the hint") {
  auto strategy = make_strategy(params_for(Kind::incr_expire));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  CHECK_FALSE(strategy->on_reply(state, b.integer(11), io).has_value());
  REQUIRE(io.sent.size() == 2);
  CHECK(io.sent[1] == Command{"PTTL", "rl:test"});
  auto decision = strategy->on_reply(state, b.integer(4321), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::denied);
  CHECK(decision->retry_ms == 4321);
  CHECK(decision->hint_expected);
}

TEST_CASE("incr-expire: a key without TTL (PTTL -1) falls back to the window as the hint") {
  // No TTL: the first request's PEXPIRE is still on its way, or its client died. The hint
  // falls back to the whole window, as middleware does.
  auto strategy = make_strategy(params_for(Kind::incr_expire));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  CHECK_FALSE(strategy->on_reply(state, b.integer(50), io).has_value());
  auto decision = strategy->on_reply(state, b.integer(-1), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::denied);
  CHECK(decision->hint_expected);
  CHECK(decision->retry_ms == 60'000);
}

TEST_CASE("incr-expire: a key gone before PTTL (-2) gives a zero hint, never a negative one") {
  auto strategy = make_strategy(params_for(Kind::incr_expire));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  CHECK_FALSE(strategy->on_reply(state, b.integer(11), io).has_value());
  auto decision = strategy->on_reply(state, b.integer(-2), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::denied);
  REQUIRE(decision->retry_ms.has_value());
  CHECK(*decision->retry_ms >= 0);
}

TEST_CASE("incr-expire: a non-integer INCR reply is a bad reply") {
  auto strategy = make_strategy(params_for(Kind::incr_expire));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  auto decision = strategy->on_reply(state, b.status("QUEUED"), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::error);
  CHECK(decision->error == ErrorKind::bad_reply);
}

TEST_CASE("single-key strategies touch only their key") {
  for (Kind kind : {Kind::naive, Kind::incr_expire}) {
    auto strategy = make_strategy(params_for(kind));
    std::vector<RequestRecord> records(3);
    records[1].bucket = 99;
    CHECK(strategy->keys_touched(records) == std::vector<std::string>{"rl:test"});
  }
}

TEST_CASE("fixed-window: one transaction on the key of the current window") {
  auto strategy = make_strategy(params_for(Kind::fixed_window));
  RecordingIo io;
  RequestState state;
  const int64_t before = wall_ms();
  strategy->begin(state, io);
  const int64_t after = wall_ms();
  CHECK(state.now_ms >= before);
  CHECK(state.now_ms <= after);
  CHECK(state.bucket >= before / 60'000);
  CHECK(state.bucket <= after / 60'000);
  const std::string key = "rl:test:" + std::to_string(state.bucket);
  CHECK(io.sent ==
        std::vector<Command>{{"MULTI"}, {"INCR", key}, {"PEXPIRE", key, "60000"}, {"EXEC"}});
}

TEST_CASE("fixed-window: decides only on the EXEC reply, allowing up to the limit") {
  auto strategy = make_strategy(params_for(Kind::fixed_window));
  ReplyBuilder b;
  for (long long count : {1, 10}) {
    CAPTURE(count);
    RecordingIo io;
    RequestState state;
    strategy->begin(state, io);
    CHECK_FALSE(strategy->on_reply(state, b.status("OK"), io).has_value());
    CHECK_FALSE(strategy->on_reply(state, b.status("QUEUED"), io).has_value());
    CHECK_FALSE(strategy->on_reply(state, b.status("QUEUED"), io).has_value());
    auto decision = strategy->on_reply(state, b.integers({count, 1}), io);
    REQUIRE(decision.has_value());
    CHECK(decision->outcome == Outcome::allowed);
    CHECK(decision->bucket == state.bucket);
    CHECK(io.sent.size() == 4);  // nothing more sent after begin
  }
}

TEST_CASE("fixed-window: over the limit denies until the next window starts") {
  auto strategy = make_strategy(params_for(Kind::fixed_window));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  for (int i = 0; i < 3; ++i)
    REQUIRE_FALSE(strategy->on_reply(state, b.status(i == 0 ? "OK" : "QUEUED"), io).has_value());
  auto decision = strategy->on_reply(state, b.integers({11, 1}), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::denied);
  CHECK(decision->hint_expected);
  REQUIRE(decision->retry_ms.has_value());
  CHECK(*decision->retry_ms > 0);
  CHECK(*decision->retry_ms <= 60'000);
  CHECK((state.now_ms + *decision->retry_ms) % 60'000 == 0);  // a window boundary
  CHECK(decision->bucket == state.bucket);
}

TEST_CASE("fixed-window: an EXEC reply that is not an array of integers is a bad reply") {
  auto strategy = make_strategy(params_for(Kind::fixed_window));
  ReplyBuilder b;
  for (redisReply* exec : {&b.nil(), &b.array({}), &b.array({&b.string("3"), &b.integer(1)})}) {
    RecordingIo io;
    RequestState state;
    strategy->begin(state, io);
    for (int i = 0; i < 3; ++i)
      REQUIRE_FALSE(strategy->on_reply(state, b.status("OK"), io).has_value());
    auto decision = strategy->on_reply(state, *exec, io);
    REQUIRE(decision.has_value());
    CHECK(decision->outcome == Outcome::error);
    CHECK(decision->error == ErrorKind::bad_reply);
  }
}

TEST_CASE("fixed-window: keys_touched lists each window seen once, skipping errors") {
  auto strategy = make_strategy(params_for(Kind::fixed_window));
  std::vector<RequestRecord> records;
  for (auto [outcome, bucket] : {std::pair{Outcome::allowed, 7},
                                 {Outcome::denied, 5},
                                 {Outcome::allowed, 7},
                                 {Outcome::error, 9},
                                 {Outcome::allowed, 6}}) {
    records.emplace_back().outcome = outcome;
    records.back().bucket = bucket;
  }
  auto keys = strategy->keys_touched(records);
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"rl:test:5", "rl:test:6", "rl:test:7"});
}

TEST_CASE("with several identities each request counts against its identity's key") {
  StrategyParams params = params_for(Kind::naive);
  params.identities = 3;
  auto strategy = make_strategy(params);
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  state.seq = 7;
  state.identity = 1;  // the key follows the identity it is given, not the seq
  strategy->begin(state, io);
  REQUIRE(io.sent == std::vector<Command>{{"GET", "rl:test:1"}});
  CHECK_FALSE(strategy->on_reply(state, b.nil(), io).has_value());
  CHECK(io.sent[1] == Command{"INCR", "rl:test:1"});
  CHECK(strategy->keys_touched({}) ==
        std::vector<std::string>{"rl:test:0", "rl:test:1", "rl:test:2"});
}

TEST_CASE("fixed-window keys are per identity and per window") {
  StrategyParams params = params_for(Kind::fixed_window);
  params.identities = 2;
  auto strategy = make_strategy(params);
  std::vector<RequestRecord> records(2);
  records[0].outcome = Outcome::allowed;
  records[0].identity = 0;
  records[0].bucket = 42;
  records[1].outcome = Outcome::denied;
  records[1].identity = 1;
  records[1].bucket = 42;
  CHECK(strategy->keys_touched(records) ==
        std::vector<std::string>{"rl:test:0:42", "rl:test:1:42"});
}
