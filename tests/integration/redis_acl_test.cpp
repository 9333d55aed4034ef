// rlcheck as a Redis ACL user (redis://user:password@host:port), the way production Redis
// grants a rate limiter only what it needs: the minimal user passes; a user refused a command
// rlcheck needs is exit 3 with one line naming the command.

#include <doctest/doctest.h>

#include <string_view>

#include "support/run_binary.hpp"
#include "support/test_acl.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;

namespace {

std::vector<std::string> rules_without(const std::string& denied) {
  std::vector<std::string> rules = sliding_window_user_rules();
  rules.push_back(denied);
  return rules;
}

// Whether the shared Redis would refuse `command` to `user` (ACL DRYRUN, Redis 7).
bool dry_run_refused(const std::string& user, const std::vector<std::string_view>& command) {
  std::vector<std::string_view> argv{"ACL", "DRYRUN", user};
  argv.insert(argv.end(), command.begin(), command.end());
  auto client = TestRedis::shared().connect();
  auto reply = client.call(argv);
  REQUIRE(reply.has_value());
  // OK when permitted; a string naming the missing permission when not.
  return !((*reply)->type == REDIS_REPLY_STATUS && std::string_view((*reply)->str) == "OK");
}

ProcessOutcome run_as(const std::string& user) {
  return run_rlcheck({"redis", "--redis", acl_user_url(user, "pw"), "--strategy", "lua", "-n", "50",
                      "-p", "10", "-r", "1"});
}

}  // namespace

TEST_CASE("a user allowed exactly what the lua strategy needs passes and leaves no key") {
  create_acl_user("limited", "pw", sliding_window_user_rules());
  // Not even CLUSTER SLOTS, which rlcheck sends to detect a cluster: refused, it means a
  // standalone server.
  CHECK(dry_run_refused("limited", {"CLUSTER", "SLOTS"}));
  CHECK_FALSE(dry_run_refused("limited", {"EVALSHA", "0000", "1", "k"}));
  const size_t keys_before = TestRedis::shared().keys("rlcheck:*").size();
  const ProcessOutcome outcome = run_as("limited");
  CAPTURE(outcome.out);
  CAPTURE(outcome.err);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.out.find("PASS") != std::string::npos);
  CHECK(outcome.out.find("limited:***@") != std::string::npos);
  CHECK(TestRedis::shared().keys("rlcheck:*").size() == keys_before);
}

TEST_CASE("a user refused EVALSHA exits 3 with one line naming the command") {
  create_acl_user("no-evalsha", "pw", rules_without("-evalsha"));
  const ProcessOutcome outcome = run_as("no-evalsha");
  CAPTURE(outcome.err);
  CHECK(outcome.exit_code == 3);
  REQUIRE(lines_of(outcome.err).size() == 1);
  CHECK(outcome.err.find("NOPERM") != std::string::npos);
  CHECK(outcome.err.find("'evalsha' command") != std::string::npos);
}

TEST_CASE("a user refused SCRIPT LOAD exits 3 before any request, naming the command") {
  create_acl_user("no-script-load", "pw", rules_without("-script|load"));
  const ProcessOutcome outcome = run_as("no-script-load");
  CAPTURE(outcome.err);
  CHECK(outcome.exit_code == 3);
  REQUIRE(lines_of(outcome.err).size() == 1);
  CHECK(outcome.err.find("NOPERM") != std::string::npos);
  CHECK(outcome.err.find("'script|load' command") != std::string::npos);
}

TEST_CASE("a user refused a command the script calls exits 3 naming it") {
  create_acl_user("no-zadd", "pw", rules_without("-zadd"));
  const ProcessOutcome outcome = run_as("no-zadd");
  CAPTURE(outcome.err);
  CHECK(outcome.exit_code == 3);
  REQUIRE(lines_of(outcome.err).size() == 1);
  // Redis names the script and line, not the command, when a script is refused one.
  CHECK(outcome.err.find("sliding_window.lua") != std::string::npos);
  CHECK(outcome.err.find("can't run this command") != std::string::npos);
}

TEST_CASE("a wrong password exits 3 without printing it") {
  create_acl_user("limited", "pw", sliding_window_user_rules());
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", acl_user_url("limited", "wrong-secret"), "-r", "1"});
  CAPTURE(outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(lines_of(outcome.err).size() == 1);
  CHECK(outcome.err.find("wrong-secret") == std::string::npos);
  CHECK(outcome.err.find("limited:***@") != std::string::npos);
}
