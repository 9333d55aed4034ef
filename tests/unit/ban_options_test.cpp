// --contract ban:...: what the command line makes of it, and what it refuses.

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

TEST_CASE("--contract ban audits its window and bans for as long as it says") {
  const auto parsed = parse_arguments({"redis", "--contract", "ban:fixed:3/2s,5s,renew"});
  const auto& checks = parsed.config.checks;
  CHECK(checks.contract == "fixed");
  CHECK(checks.limit == 3);
  CHECK(checks.window == 2s);
  CHECK(checks.ban == 5s);
  CHECK(checks.ban_renews);
  const auto choice = choose_contract(parsed.config, parsed.config.redis.strategy, checks.limit);
  CHECK(choice.name == "fixed");
  CHECK(choice.anchor == "clock");
  REQUIRE(choice.audit.ban);
  CHECK(choice.audit.ban->ban_ns == 5'000'000'000);
  CHECK(choice.audit.ban->renews);
  // A denial may be told to wait out the whole ban.
  CHECK(choice.audit.max_retry_after_ms == 5000);
  CHECK(choice.audit.tolerance.window_ms == 5000);
}

TEST_CASE("a ban is a contract of its own, counted in requests, judged over the whole run") {
  CHECK(mentions(usage_error({"redis", "--contract", "ban:3/2s,5s", "--contract", "fixed:10/1m"}),
                 "contract of its own"));
  CHECK(mentions(usage_error({"redis", "--contract", "ban:3/2s,5s", "--cost", "2"}),
                 "whatever they cost"));
  const std::string streamed =
      usage_error({"redis", "--contract", "ban:3/2s,5s", "--audit", "stream"});
  CHECK(streamed.starts_with("--audit stream: "));
  CHECK(mentions(streamed, "ban"));
  CHECK(mentions(usage_error({"redis", "--contract", "ban:fixed:3/2s,5s", "--anchor", "first-hit"}),
                 "on the clock"));
}
