#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "app/hook_budget.hpp"
#include "command_line_support.hpp"
#include "engine/interrupt.hpp"

using rlcheck::app::hook_timeout_s;
using rlcheck::app::longest_check_s;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;

namespace {

rlcheck::config::Config config_of(std::vector<const char*> args) {
  return parse_arguments(std::move(args)).config;
}

}  // namespace

TEST_CASE("a 2-minute open-model run gets a hook timeout beyond its 2 minutes, with a margin") {
  const auto one_run =
      hook_timeout_s(config_of({"redis", "--rate", "10/s", "--duration", "2m", "-r", "1"}));
  REQUIRE(one_run.has_value());
  CHECK(*one_run >= 120 + 30);
  // Every run counts: the default 4 runs take four times as long.
  const auto four_runs = hook_timeout_s(config_of({"redis", "--rate", "10/s", "--duration", "2m"}));
  REQUIRE(four_runs.has_value());
  CHECK(*four_runs >= 4 * 120 + 30);
}

TEST_CASE("the closed model is bounded by the timeout of each round of requests") {
  // 200 requests on 50 connections: 4 rounds, each at most --timeout 5s.
  const double longest = *longest_check_s(config_of({"redis", "-n", "200", "-p", "50", "-r", "1"}));
  CHECK(longest >= 4 * 5);
  const double pipelined =
      *longest_check_s(config_of({"redis", "-n", "200", "-p", "50", "-r", "1", "--pipeline", "4"}));
  CHECK(pipelined < longest);
  // A longer --timeout lengthens every round.
  CHECK(*longest_check_s(config_of(
            {"redis", "-n", "200", "-p", "50", "-r", "1", "--timeout", "20s"})) >= 4 * 20);
}

TEST_CASE("waits between and after the runs are in the budget") {
  const double plain =
      *longest_check_s(config_of({"http", "http://127.0.0.1:1/", "-l", "5", "-w", "10s", "-n", "20",
                                  "-r", "2", "-H", "X-Key: {run}"}));
  const double paused =
      *longest_check_s(config_of({"http", "http://127.0.0.1:1/", "-l", "5", "-w", "10s", "-n", "20",
                                  "-r", "2", "-H", "X-Key: {run}", "--between-runs", "30s"}));
  CHECK(paused >= plain + 30);
  const double verified =
      *longest_check_s(config_of({"http", "http://127.0.0.1:1/", "-l", "5", "-w", "10s", "-n", "20",
                                  "-r", "2", "-H", "X-Key: {run}", "--verify-retry-after"}));
  CHECK(verified >= plain + 10);
}

TEST_CASE("every kind's pauses, resets and compared targets are in the budget: gRPC's too") {
  const std::vector<const char*> base{"grpc",       "127.0.0.1:1",
                                      "--method",   "pkg.Limits/Check",
                                      "--metadata", "X-User: {run}",
                                      "-l",         "5",
                                      "-w",         "10s",
                                      "-n",         "20",
                                      "-r",         "2"};
  const double plain = *longest_check_s(config_of(base));
  std::vector<const char*> paused = base;
  paused.insert(paused.end(), {"--between-runs", "30s"});
  CHECK(*longest_check_s(config_of(paused)) >= plain + 30);
  std::vector<const char*> reset = base;
  reset.insert(reset.end(), {"--reset-cmd", "true"});
  CHECK(*longest_check_s(config_of(reset)) > plain);
  const double compared = *longest_check_s(
      config_of({"compare", "--url", "grpc://127.0.0.1:1", "--url", "grpc://127.0.0.1:2",
                 "--method", "pkg.Limits/Check", "--metadata", "X-User: {run}", "-l", "5", "-w",
                 "10s", "-n", "20", "-r", "2"}));
  CHECK(compared >= 2 * plain);
}

TEST_CASE("a wait only the server knows has no bound: the error names the flag") {
  const auto unknown = hook_timeout_s(
      config_of({"http", "http://127.0.0.1:1/", "-n", "20", "--verify-retry-after"}));
  REQUIRE_FALSE(unknown.has_value());
  CHECK(mentions(unknown.error(), "--verify-retry-after"));
  CHECK(mentions(unknown.error(), "--max-retry-after"));
  CHECK(hook_timeout_s(config_of({"http", "http://127.0.0.1:1/", "-n", "20", "--verify-retry-after",
                                  "--max-retry-after", "30s"}))
            .has_value());
}

TEST_CASE("compare and scenario suites add up their targets") {
  const double one = *longest_check_s(config_of({"redis", "-n", "200", "-r", "1"}));
  const double two =
      *longest_check_s(config_of({"compare", "--strategies", "naive,lua", "-n", "200", "-r", "1"}));
  CHECK(two > one);
  const auto suite =
      hook_timeout_s(std::vector{config_of({"redis", "-r", "1"}), config_of({"redis", "-r", "1"})});
  REQUIRE(suite.has_value());
  CHECK(*suite > *hook_timeout_s(config_of({"redis", "-r", "1"})));
}

TEST_CASE("a hook's deadline that has not passed leaves the runs alone and ends with its owner") {
  {
    const rlcheck::app::HookDeadline deadline(std::chrono::seconds(3600));
    CHECK_FALSE(deadline.passed());
    CHECK(deadline.timeout() == std::chrono::seconds(3600));
  }
  CHECK_FALSE(rlcheck::engine::interrupted());
}
