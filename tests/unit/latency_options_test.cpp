// --contract queue:R,B,nodelay=K (--nodelay K) and --contract slow-down:...: what the command
// line makes of them, and what it refuses.

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "command_line_support.hpp"
#include "judging/contract_choice.hpp"

using rlcheck::judging::choose_contract;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;
using namespace std::chrono_literals;

TEST_CASE("a queue's undelayed part, from the spec or --nodelay, reaches the audit") {
  for (const std::vector<const char*>& args :
       {std::vector<const char*>{"http", "http://127.0.0.1:9/", "--contract",
                                 "queue:10/s,8,nodelay=3"},
        std::vector<const char*>{"http", "http://127.0.0.1:9/", "--contract", "queue", "--refill",
                                 "10/s", "--queue", "8", "--nodelay", "3"}}) {
    const auto parsed = parse_arguments(args);
    const auto& checks = parsed.config.checks;
    CHECK(checks.contract == "queue");
    CHECK(checks.queue == 8);
    CHECK(checks.nodelay == 3);
    const auto choice = choose_contract(parsed.config, std::nullopt, checks.limit);
    CHECK(choice.audit.queue_depth == 8);
    CHECK(choice.audit.queue_nodelay == 3);
  }
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:9/", "--nodelay", "3"}),
                 "only with --contract queue"));
  CHECK(usage_error({"http", "http://127.0.0.1:9/", "--contract", "queue", "--queue", "2",
                     "--nodelay", "3"})
            .starts_with("--nodelay: 3 is more than the queue's depth 2"));
  CHECK(usage_error({"http", "http://127.0.0.1:9/", "--contract", "queue:10/s,8,nodelay=3",
                     "--nodelay", "2"})
            .starts_with("--nodelay: "));
}

TEST_CASE("--contract slow-down states its window, its delay and its cap") {
  const auto parsed = parse_arguments(
      {"http", "http://127.0.0.1:9/", "--contract", "slow-down:first-hit:3/3s,100ms,1s"});
  const auto& checks = parsed.config.checks;
  CHECK(checks.contract == "slow-down");
  CHECK(checks.limit == 3);
  CHECK(checks.window == 3s);
  const auto choice = choose_contract(parsed.config, std::nullopt, checks.limit);
  REQUIRE(choice.audit.slow_down);
  const auto& rule = *choice.audit.slow_down;
  CHECK(rule.after == 3);
  CHECK(rule.window_ns == 3'000'000'000);
  CHECK(rule.step_ns == 100'000'000);
  CHECK(rule.max_ns == 1'000'000'000);
  CHECK(rule.kind == rlcheck::checks::SlowDownRule::Kind::first_hit);
}

TEST_CASE("a slow-down is a contract of its own, counted in requests, judged over the whole run") {
  CHECK(mentions(
      usage_error({"redis", "--contract", "slow-down:3/2s,100ms", "--contract", "fixed:10/1m"}),
      "contract of its own"));
  CHECK(mentions(usage_error({"redis", "--contract", "slow-down:3/2s,100ms", "--cost", "2"}),
                 "whatever they cost"));
  const std::string streamed =
      usage_error({"redis", "--contract", "slow-down:3/2s,100ms", "--audit", "stream"});
  CHECK(streamed.starts_with("--audit stream: "));
  CHECK(mentions(streamed, "slow-down"));
  CHECK(usage_error({"redis", "--contract", "slow-down:3/2s"}).starts_with("--contract: "));
}
