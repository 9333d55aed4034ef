// The seed experiment against a real redis-server: atomic limiters hold the limit exactly,
// the naive GET-then-INCR one over-admits, every time.

#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

json run_json(const std::vector<std::string>& extra, int expected_exit) {
  std::vector<std::string> args{"redis", "--redis", TestRedis::shared().tcp_url(), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stderr: " << outcome.err);
  REQUIRE(outcome.exit_code == expected_exit);
  return json::parse(outcome.out);
}

}  // namespace

TEST_CASE("lua holds a limit of 10 exactly in four runs out of four at 200 x 50") {
  const json report = run_json({"--strategy", "lua", "-n", "200", "-p", "50"}, 0);
  CHECK(report["schema"] == "rlcheck.report/v1");
  CHECK(report["target"]["strategy"] == "sliding-window");
  REQUIRE(report["runs"].size() == 4);
  for (const auto& run : report["runs"]) {
    CHECK(run["allowed"] == 10);
    CHECK(run["denied"] == 190);
    CHECK(run["errors"] == 0);
    CHECK(run["retry_after_s"]["present"] == 190);
  }
  CHECK(report["verdict"] == "pass");
  CHECK(report["exit_code"] == 0);
}

TEST_CASE("naive GET-then-INCR goes over the limit in at least 3 of 4 runs, every time") {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const json report = run_json({"--strategy", "naive", "-n", "200", "-p", "50"}, 1);
    CHECK(report["summary"]["runs_over_limit"].get<int>() >= 3);
    CHECK(check_status(report, "limit") == "fail");
    CHECK(report["summary"]["allowed"]["max"].get<int>() > 10);
  }
}

TEST_CASE("the race shows with several worker threads too" * doctest::test_suite("threads")) {
  const json naive = run_json({"--strategy", "naive", "--threads", "2"}, 1);
  CHECK(naive["summary"]["runs_over_limit"].get<int>() >= 3);
  const json lua = run_json({"--strategy", "lua", "--threads", "2"}, 0);
  CHECK(lua["summary"]["allowed"]["max"] == 10);
}

TEST_CASE("every atomic strategy admits exactly the limit in every run") {
  for (const char* strategy :
       {"sliding-window", "token-bucket", "gcra", "incr-expire", "fixed-first-hit"}) {
    const std::string strategy_name = strategy;
    CAPTURE(strategy_name);
    const json report = run_json({"--strategy", strategy}, 0);
    for (const auto& run : report["runs"]) {
      CHECK(run["allowed"] == 10);
      CHECK(run["errors"] == 0);
    }
    CHECK(check_status(report, "key-ttl") == "pass");
    CHECK(check_status(report, "retry-after-present") == "pass");
  }
}

TEST_CASE("fixed-window admits exactly the limit within each aligned window") {
  const json report = run_json({"--strategy", "fixed-window"}, 0);
  for (const auto& run : report["runs"]) {
    // A run that straddles a window boundary may legitimately see two windows' worth.
    CHECK(run["peak"]["allowed"] == 10);
    CHECK((run["allowed"] == 10 || run["allowed"] == 20));
  }
}

TEST_CASE("a unix socket URL works like TCP") {
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().unix_url(), "-q"});
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.out == "PASS\n");
}

TEST_CASE("fresh keys are deleted after the runs and nothing else is touched") {
  auto client = TestRedis::shared().connect();
  REQUIRE(client.call({"SET", "user:precious", "keep me"}));
  for (const char* strategy :
       {"naive", "incr-expire", "fixed-window", "sliding-window", "token-bucket", "gcra"}) {
    const std::string strategy_name = strategy;
    CAPTURE(strategy_name);
    run_json({"--strategy", strategy, "-r", "2"}, std::string(strategy) == "naive" ? 1 : 0);
    CHECK(TestRedis::shared().keys("rlcheck:*").empty());
  }
  auto value = client.call({"GET", "user:precious"});
  REQUIRE(value);
  CHECK(std::string((*value)->str, (*value)->len) == "keep me");
}

TEST_CASE("an explicit --key is kept; only --reset deletes it, before each run") {
  auto client = TestRedis::shared().connect();
  REQUIRE(client.call({"DEL", "team:limiter"}));
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  REQUIRE(client.call({"ZADD", "team:limiter", std::to_string(now_ms), "their-member"}));

  // Without --reset the user's key survives, and its entry counts against the limit.
  const json kept_run = run_json({"--strategy", "lua", "--key", "team:limiter", "-r", "1"}, 0);
  CHECK(kept_run["runs"][0]["allowed"] == 9);
  auto kept = client.call({"ZSCORE", "team:limiter", "their-member"});
  REQUIRE(kept);
  CHECK((*kept)->type == REDIS_REPLY_STRING);

  // With --reset it is deleted before the run, then written by the run.
  const json reset =
      run_json({"--strategy", "lua", "--key", "team:limiter", "--reset", "-r", "1"}, 0);
  CHECK(reset["runs"][0]["allowed"] == 10);
  auto gone = client.call({"ZSCORE", "team:limiter", "their-member"});
  REQUIRE(gone);
  CHECK((*gone)->type == REDIS_REPLY_NIL);
  auto exists = client.call({"EXISTS", "team:limiter"});
  REQUIRE(exists);
  CHECK((*exists)->integer == 1);  // the run's own entries, kept: the key is the user's
}

TEST_CASE("the embedded default starts a private redis-server and removes it at exit") {
  auto probe = rlcheck::redis::SyncClient::connect(
      *rlcheck::redis::parse_endpoint("redis://127.0.0.1:6379"), std::chrono::milliseconds(200));
  if (probe) {
    MESSAGE("something listens on 127.0.0.1:6379: rlcheck uses it, nothing to start");
    const ProcessOutcome outcome = run_rlcheck({"redis", "-q"});
    CHECK(outcome.exit_code == 0);
    return;
  }
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--strategy", "lua", "-n", "200", "-p", "50"});
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  const auto lines = lines_of(outcome.err);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("started a private redis-server on unix://") != std::string::npos);
  const size_t start = lines[0].find("unix://") + 7;
  const std::string socket = lines[0].substr(start, lines[0].find(' ', start) - start);
  CHECK_FALSE(std::filesystem::exists(std::filesystem::path(socket).parent_path()));
}
