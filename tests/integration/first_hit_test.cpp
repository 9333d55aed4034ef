// Fixed windows that open at the first hit (`--contract fixed --anchor first-hit`) against a
// real redis-server: rlcheck's own incr-expire (INCR, then PEXPIRE when it returned 1) and
// fixed-first-hit (the same in one script) are audited by that promise unless told otherwise,
// so under an open model over several windows they pass; `--anchor` is accepted only where
// windows have somewhere to start.
// Database 9 keeps these keys apart from the other integration tests.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string first_hit_db_url() {
  return TestRedis::shared().tcp_url() + "/9";
}

// `rlcheck redis --strategy <strategy>` at 30/s for 3 s against 10 per 1 s, plus `extra`.
ProcessOutcome first_hit_run(const std::string& strategy, const std::vector<std::string>& extra) {
  std::vector<std::string> args{
      "redis",    "--redis", first_hit_db_url(), "--strategy", strategy,     "--limit", "10",
      "--window", "1s",      "--rate",           "30/s",       "--duration", "3s",      "-r",
      "1",        "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_rlcheck(args);
}

}  // namespace

TEST_CASE(
    "first-hit: incr-expire and fixed-first-hit under an open model over three windows pass "
    "their own contract") {
  for (const char* strategy : {"incr-expire", "fixed-first-hit"}) {
    const std::string strategy_name = strategy;
    CAPTURE(strategy_name);
    const ProcessOutcome outcome = first_hit_run(strategy, {});
    INFO("stdout: " << outcome.out);
    INFO("stderr: " << outcome.err);
    REQUIRE(outcome.exit_code == 0);
    const json report = json::parse(outcome.out);
    CHECK(report["params"]["contract"] == "fixed");
    CHECK(report["params"]["anchor"] == "first-hit");
    CHECK(check_status(report, "contract") == "pass");
    CHECK(check_status(report, "limit") == "pass");
    // Over three windows the run is judged for lock-outs and for its hints (PTTL of the key).
    CHECK(check_status(report, "utilisation") == "pass");
    CHECK(check_status(report, "retry-after-accuracy") == "pass");
    CHECK(check_detail(report, "contract").find("fixed first-hit contract") != std::string::npos);
    CHECK(check_status(report, "key-ttl") == "pass");
  }
}

TEST_CASE("first-hit: --contract fixed --anchor clock judges incr-expire by the clock's windows") {
  // Whether its first-hit windows straddle the clock's boundaries depends on when the run
  // starts, so only the promise judged is asserted, not the verdict.
  const ProcessOutcome outcome =
      first_hit_run("incr-expire", {"--contract", "fixed", "--anchor", "clock"});
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  REQUIRE((outcome.exit_code == 0 || outcome.exit_code == 1));
  const json report = json::parse(outcome.out);
  CHECK(report["params"]["contract"] == "fixed");
  CHECK(report["params"]["anchor"] == "clock");
  CHECK(check_detail(report, "contract").find("first-hit") == std::string::npos);
}

TEST_CASE("first-hit: --anchor is a usage error without --contract fixed, or with a bad value") {
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"--contract", "sliding", "--anchor", "first-hit"},
                                             {"--anchor", "first-hit"},
                                             {"--contract", "fixed", "--anchor", "first"}}) {
    std::vector<std::string> args{"redis", "--redis", first_hit_db_url(), "-n", "5"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessOutcome outcome = run_rlcheck(args);
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code == 64);
    CHECK(outcome.err.find("--anchor") != std::string::npos);
  }
}

TEST_CASE("first-hit: with state from before the run, a pass says how little it judged") {
  // An explicit --key without --reset: a window may have opened before the run.
  const std::string key = "first-hit-test:phase";
  const ProcessOutcome outcome = first_hit_run("incr-expire", {"--key", key});
  auto client = TestRedis::shared().connect();
  client.call({"SELECT", "9"});
  client.call({"DEL", key});
  INFO("stdout: " << outcome.out);
  REQUIRE(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK(check_detail(report, "limit").find("judged little") != std::string::npos);
  CHECK(check_detail(report, "limit").find("--exact (fresh clients)") != std::string::npos);
  CHECK(check_detail(report, "utilisation").find("first-hit phase is unknown") !=
        std::string::npos);
  // A fresh key per run (the default): every window judged, nothing to say.
  const json fresh = json::parse(first_hit_run("incr-expire", {}).out);
  CHECK(check_detail(fresh, "limit").find("judged little") == std::string::npos);
}
