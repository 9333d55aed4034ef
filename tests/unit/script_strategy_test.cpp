#include <doctest/doctest.h>

#include <random>
#include <string>
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
using namespace std::chrono_literals;

namespace {

const LoadedScript k_script{"sliding_window.lua", "return 1", "0123abcd"};

StrategyParams params_for(Kind kind) {
  StrategyParams params;
  params.kind = kind;
  params.key = "rl:slide";
  params.limit = 10;
  params.window_ms = 60'000;
  params.run = 2;
  params.instance_id = "5eed";
  params.script = &k_script;
  return params;
}

// The arguments of request `seq`.
std::vector<std::string> args_of(const StrategyParams& params, uint64_t seq) {
  auto strategy = make_strategy(params);
  RecordingIo io;
  rlcheck::engine::ClientRng rng(1);
  RequestState state;
  state.seq = seq;
  state.rng = &rng;
  strategy->begin(state, io);
  REQUIRE(io.evals.size() == 1);
  return io.evals[0].args;
}

}  // namespace

TEST_CASE("sliding-window: one EVAL of the script with limit, window and a member") {
  auto strategy = make_strategy(params_for(Kind::sliding_window));
  RecordingIo io;
  RequestState state;
  state.seq = 3;
  strategy->begin(state, io);
  CHECK(io.sent.empty());
  REQUIRE(io.evals.size() == 1);
  CHECK(io.evals[0].script == &k_script);
  CHECK(io.evals[0].key == "rl:slide");
  REQUIRE(io.evals[0].args.size() == 3);
  CHECK(io.evals[0].args[0] == "10");
  CHECK(io.evals[0].args[1] == "60000");
  CHECK(io.evals[0].args[2].find("5eed") != std::string::npos);
  CHECK(strategy->script() == &k_script);
}

TEST_CASE("sliding-window: the member is unique per request, run and invocation") {
  const StrategyParams base = params_for(Kind::sliding_window);
  const std::string member = args_of(base, 0)[2];
  CHECK(args_of(base, 1)[2] != member);
  CHECK(args_of(base, 0)[2] == member);  // a pure function of the request

  StrategyParams next_run = base;
  next_run.run = 3;
  CHECK(args_of(next_run, 0)[2] != member);

  StrategyParams other_invocation = base;
  other_invocation.instance_id = "beef";
  CHECK(args_of(other_invocation, 0)[2] != member);
}

TEST_CASE("script replies become decisions") {
  auto strategy = make_strategy(params_for(Kind::sliding_window));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);

  auto allowed = strategy->on_reply(state, b.integers({1, 9, 0}), io);
  REQUIRE(allowed.has_value());
  CHECK(allowed->outcome == Outcome::allowed);
  CHECK(allowed->remaining == 9);

  auto denied = strategy->on_reply(state, b.integers({0, 0, 2500}), io);
  REQUIRE(denied.has_value());
  CHECK(denied->outcome == Outcome::denied);
  CHECK(denied->retry_ms == 2500);
  CHECK(denied->hint_expected);
  CHECK(io.evals.size() == 1);  // one command per request
}

TEST_CASE("a reply outside the script contract is a bad reply naming the script") {
  auto strategy = make_strategy(params_for(Kind::sliding_window));
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  strategy->begin(state, io);
  auto decision = strategy->on_reply(state, b.string("ok"), io);
  REQUIRE(decision.has_value());
  CHECK(decision->outcome == Outcome::error);
  CHECK(decision->error == ErrorKind::bad_reply);
  CHECK(decision->error_message.find("sliding_window.lua") != std::string::npos);
  CHECK(decision->error_message.find("\"ok\"") != std::string::npos);
}

TEST_CASE("token-bucket and gcra pass burst, refill tokens and refill period in ms") {
  for (Kind kind : {Kind::token_bucket, Kind::gcra}) {
    StrategyParams params = params_for(kind);
    params.burst = 20;
    params.refill = {5, 2s};
    CHECK(args_of(params, 0) == std::vector<std::string>{"20", "5", "2000"});
  }
}

TEST_CASE("--script without --arg gets limit, window and a fresh uuid per request") {
  StrategyParams params = params_for(Kind::script);
  auto strategy = make_strategy(params);
  RecordingIo io;
  rlcheck::engine::ClientRng rng(99);
  for (uint64_t seq = 0; seq < 2; ++seq) {
    RequestState state;
    state.seq = seq;
    state.rng = &rng;
    strategy->begin(state, io);
  }
  REQUIRE(io.evals.size() == 2);
  REQUIRE(io.evals[0].args.size() == 3);
  CHECK(io.evals[0].args[0] == "10");
  CHECK(io.evals[0].args[1] == "60000");
  CHECK(io.evals[0].args[2].size() == 36);
  CHECK(io.evals[0].args[2] != io.evals[1].args[2]);
}

TEST_CASE("--script with --arg templates expands them per request") {
  StrategyParams params = params_for(Kind::script);
  params.arg_templates = {"{seq}", "run-{run}", "{limit}/{window_ms}"};
  CHECK(args_of(params, 7) == std::vector<std::string>{"7", "run-2", "10/60000"});
}

TEST_CASE("script strategies touch only their key") {
  auto strategy = make_strategy(params_for(Kind::sliding_window));
  std::vector<RequestRecord> records(2);
  records[0].bucket = 4;
  CHECK(strategy->keys_touched(records) == std::vector<std::string>{"rl:slide"});
}

TEST_CASE("--script-keys 1 passes the key itself, as before") {
  StrategyParams params = params_for(Kind::script);
  params.script_keys = 1;
  auto strategy = make_strategy(params);
  RecordingIo io;
  rlcheck::engine::ClientRng rng(1);
  RequestState state;
  state.rng = &rng;
  strategy->begin(state, io);
  REQUIRE(io.evals.size() == 1);
  CHECK(io.evals[0].keys == std::vector<std::string>{"rl:slide"});
  CHECK(strategy->keys_touched({}) == std::vector<std::string>{"rl:slide"});
}

TEST_CASE("--script-keys K passes <key>:0 ... <key>:K-1 under one hash tag") {
  StrategyParams params = params_for(Kind::script);
  params.script_keys = 3;
  params.identities = 2;
  auto strategy = make_strategy(params);
  RecordingIo io;
  rlcheck::engine::ClientRng rng(1);
  for (uint64_t seq = 0; seq < 2; ++seq) {
    RequestState state;
    state.seq = seq + 10;
    state.identity = static_cast<uint32_t>(seq);  // the key follows the identity given
    state.rng = &rng;
    strategy->begin(state, io);
  }
  REQUIRE(io.evals.size() == 2);
  CHECK(io.evals[0].keys ==
        std::vector<std::string>{"{rl:slide:0}:0", "{rl:slide:0}:1", "{rl:slide:0}:2"});
  CHECK(io.evals[1].keys ==
        std::vector<std::string>{"{rl:slide:1}:0", "{rl:slide:1}:1", "{rl:slide:1}:2"});
  CHECK(io.evals[1].args.size() == 3);  // ARGV unchanged
  // Every key of every identity is TTL-audited and cleaned up.
  CHECK(strategy->keys_touched({}) == std::vector<std::string>{"{rl:slide:0}:0", "{rl:slide:0}:1",
                                                               "{rl:slide:0}:2", "{rl:slide:1}:0",
                                                               "{rl:slide:1}:1", "{rl:slide:1}:2"});
}

TEST_CASE("script keys keep a hash tag the key already has") {
  using rlcheck::redis::script_keys;
  CHECK(script_keys("{user:7}:rl", 2) ==
        std::vector<std::string>{"{user:7}:rl:0", "{user:7}:rl:1"});
  CHECK(script_keys("rl:{x}", 2) == std::vector<std::string>{"rl:{x}:0", "rl:{x}:1"});
  // "{}" is no tag in Redis Cluster: the whole key is hashed, so it is wrapped.
  CHECK(script_keys("rl:{}", 2) == std::vector<std::string>{"{rl:{}}:0", "{rl:{}}:1"});
  CHECK(script_keys("rl", 1) == std::vector<std::string>{"rl"});
}

TEST_CASE("--reply reads the script's reply in the library's shape") {
  StrategyParams params = params_for(Kind::script);
  params.reply = rlcheck::config::ReplyFormat::counter;
  params.limit = 5;
  auto strategy = make_strategy(params);
  RecordingIo io;
  ReplyBuilder b;
  RequestState state;
  auto allowed = strategy->on_reply(state, b.integers({5, 1000}), io);
  REQUIRE(allowed.has_value());
  CHECK(allowed->outcome == Outcome::allowed);
  auto denied = strategy->on_reply(state, b.integers({6, 1000}), io);
  REQUIRE(denied.has_value());
  CHECK(denied->outcome == Outcome::denied);
  CHECK(denied->retry_ms == 1000);

  // The contract's shape is a wrong shape here: the error names the script and the format.
  auto wrong = strategy->on_reply(state, b.integers({1, 4, 0}), io);
  REQUIRE(wrong.has_value());
  CHECK(wrong->error == ErrorKind::bad_reply);
  CHECK(wrong->error_message.find("sliding_window.lua") != std::string::npos);
  CHECK(wrong->error_message.find("array of 3") != std::string::npos);
  CHECK(wrong->error_message.find("{hits, ttl_ms}") != std::string::npos);
  CHECK(wrong->error_message.find("--reply counter") != std::string::npos);
}

TEST_CASE("on a cluster each identity's generated key is one hash tag") {
  const rlcheck::redis::IdentityKeys plain("rlcheck:ab12:lua:1", 3);
  CHECK(plain.all() == std::vector<std::string>{"rlcheck:ab12:lua:1:0", "rlcheck:ab12:lua:1:1",
                                                "rlcheck:ab12:lua:1:2"});
  const rlcheck::redis::IdentityKeys tagged("rlcheck:ab12:lua:1", 3, true);
  CHECK(tagged.all() == std::vector<std::string>{"{rlcheck:ab12:lua:1:0}", "{rlcheck:ab12:lua:1:1}",
                                                 "{rlcheck:ab12:lua:1:2}"});
  CHECK(rlcheck::redis::IdentityKeys("rlcheck:ab12:lua:1", 1, true).of_identity(0) ==
        "{rlcheck:ab12:lua:1}");
  // --script-keys then share the identity's tag: one slot per identity.
  CHECK(rlcheck::redis::script_keys(tagged.of_identity(1), 2) ==
        std::vector<std::string>{"{rlcheck:ab12:lua:1:1}:0", "{rlcheck:ab12:lua:1:1}:1"});
}
