// `rlcheck probe` looking for a second, longer limit behind the first, and probing in units:
// a limiter of 5 per second and 15 per 5 seconds (tests/fixtures/org_limits_app.py
// /two-limits/, and Flask-Limiter 3.3's "5 per second;15 per 5 seconds") is found as both, and
// the flags naming both, pasted into a load run against it, pass where the first alone fails;
// a limiter of one limit is said to show none over the span tried; --cost N reads a Redis
// limiter counted in units. Runs in the probe's shard, alone: the probe times a live limiter
// from outside, and every timing assertion has a margin of 10 % of a window or more.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/real_gateways.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck probe ARGS --json`, parsed; the outcome kept for the messages.
struct SecondProbe {
  ProcessOutcome outcome;
  json report;
};

SecondProbe probe_for_second(std::vector<std::string> args) {
  args.insert(args.begin(), "probe");
  args.push_back("--json");
  SecondProbe probed{run_rlcheck(args), json()};
  INFO("stdout: " << probed.outcome.out);
  INFO("stderr: " << probed.outcome.err);
  REQUIRE_FALSE(probed.outcome.timed_out);
  probed.report = json::parse(probed.outcome.out, nullptr, false);
  REQUIRE_FALSE(probed.report.is_discarded());
  return probed;
}

// The first limit, 5 per second, and a second of 15 per 5 seconds, found and named.
void check_both_found(const SecondProbe& probed) {
  const json& report = probed.report;
  INFO(report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(report["algorithm"] == "sliding");
  CHECK(report["limit"] == 5);
  const json& second = report["second_limit"];
  REQUIRE(second.is_object());
  CHECK(second["search"] == "found");
  CHECK(second["limit"] == 15);
  CHECK(second["window_from"] == "readmission");
  REQUIRE(second["window_ms"].is_number());
  CHECK(second["window_ms"].get<double>() >= 4500);
  CHECK(second["window_ms"].get<double>() <= 5500);
  CHECK(report["flags"] == "--contract sliding:5/1s --contract sliding:15/5s");
  CHECK(report["parts"] == json::array({"sliding:5/1s", "sliding:15/5s"}));
}

// `rlcheck http URL -H HEADER FLAGS --rate 20/s EXTRA`: 15 admissions reach the second limit
// within 3 s.
ProcessOutcome pasted_into_http(const std::string& url, const std::string& header,
                                const std::string& flags,
                                const std::string& extra = "--duration 3s -q") {
  std::vector<std::string> args{"http", url, "-H", header, "--rate", "20/s"};
  append_words(args, flags + " " + extra);
  return run_rlcheck(args);
}

}  // namespace

TEST_CASE("probe second limit: 5/1s and 15/5s are found, and the flags naming both pass") {
  const Gateway& app = org_limits_app();
  const std::string url = app.server->base_url() + "/two-limits/";
  const SecondProbe probed =
      probe_for_second({url, "-H", "X-User: second-{run}", "--max-time", "40s"});
  check_both_found(probed);

  const std::string flags = probed.report["flags"];
  // 6 s: the second limit frees its first slots within the run.
  const ProcessOutcome both =
      pasted_into_http(url, "X-User: pasted-both-{run}", flags, "--duration 6s -q");
  INFO("flags: " << flags);
  INFO("stdout: " << both.out);
  INFO("stderr: " << both.err);
  CHECK(both.exit_code == 0);
  // The first limit alone, as probe suggested before: over 5 s the second limit's denials
  // come while the first has room.
  const ProcessOutcome first_alone = pasted_into_http(
      url, "X-User: pasted-first-{run}", "--contract sliding:5/1s", "--duration 5s --json");
  CHECK(first_alone.exit_code == 1);
  const json alone = json::parse(first_alone.out, nullptr, false);
  REQUIRE_FALSE(alone.is_discarded());
  INFO(checks_of(alone));
  CHECK(check_status(alone, "utilisation") == "fail");
}

TEST_CASE("real probe: Flask-Limiter's \"5 per second;15 per 5 seconds\" is found as both") {
  const Gateway& app = flask_limiter_app();
  if (skipped(app, k_flask_limiter_missing))
    return;
  const std::string url = app.server->base_url() + "/multi-short/";
  const SecondProbe probed =
      probe_for_second({url, "-H", "X-Client: second-{run}", "--max-time", "40s"});
  check_both_found(probed);
  // The first limit's headers, not the second's, were judged.
  CHECK(probed.report["advertised_matches"] == true);
  // Pasted back, both parts hold and no denial came with room in both; Flask-Limiter's
  // Retry-After is seconds off (docs/probe.md), so only these checks are asserted.
  const ProcessOutcome pasted = pasted_into_http(url, "X-Client: pasted-{run}",
                                                 probed.report["flags"], "--duration 3s --json");
  const json report = json::parse(pasted.out, nullptr, false);
  REQUIRE_FALSE(report.is_discarded());
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") != "fail");
}

TEST_CASE("probe second limit: a limiter of one limit shows none over the span tried") {
  const std::string redis = TestRedis::shared().tcp_url();
  const SecondProbe probed = probe_for_second(
      {"--redis", redis, "--strategy", "lua", "-l", "5", "-w", "1s", "--max-time", "30s"});
  const json& report = probed.report;
  INFO(report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(report["flags"] == "--contract sliding --limit 5 --window 1s");
  const json& second = report["second_limit"];
  REQUIRE(second.is_object());
  CHECK(second["search"] == "none-seen");
  // Up to 5 windows at 90 % of 5 per second: 2 windows at least, never more than 6.
  CHECK(second["span_ms"].get<int64_t>() >= 2000);
  CHECK(second["span_ms"].get<int64_t>() <= 6000);
  CHECK(second["admitted"] == second["requests"]);
  CHECK(second["limit"].is_null());
  bool said = false;
  for (const json& note : report["notes"])
    said = said || note.get<std::string>().starts_with("no second limit within");
  CHECK(said);

  std::vector<std::string> args{"redis", "--redis",    redis, "--strategy", "lua", "--rate",
                                "20/s",  "--duration", "3s",  "--runs",     "1",   "-q"};
  append_words(args, report["flags"]);
  const ProcessOutcome pasted = run_rlcheck(args);
  INFO("stdout: " << pasted.out);
  CHECK(pasted.exit_code == 0);
}

TEST_CASE("probe --cost: a limiter counted in units is reported in units, and pasted back") {
  const std::string redis = TestRedis::shared().tcp_url();
  const std::string script = std::string(RLCHECK_SOURCE_DIR) + "/examples/limiter_cost.lua";
  // 20 units per second, each request 3: 6 admitted, 18 units.
  const std::vector<std::string> limiter{"--redis", redis,    "--script", script,
                                         "--arg",   "20",     "--arg",    "1000",
                                         "--arg",   "{cost}", "--arg",    "{uuid}"};
  std::vector<std::string> args = limiter;
  append_words(args, "--cost 3 --max-time 30s");
  const SecondProbe probed = probe_for_second(args);
  const json& report = probed.report;
  INFO(report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(report["algorithm"] == "sliding");
  CHECK(report["limit"] == 18);
  CHECK(report["cost"] == 3);
  CHECK(report["flags"] == "--contract sliding --limit 18 --window 1s --cost 3");

  std::vector<std::string> paste{"redis"};
  paste.insert(paste.end(), limiter.begin(), limiter.end());
  append_words(paste,
               report["flags"].get<std::string>() + " --rate 20/s --duration 3s --runs 1 -q");
  const ProcessOutcome pasted = run_rlcheck(paste);
  INFO("stdout: " << pasted.out);
  CHECK(pasted.exit_code == 0);
}

TEST_CASE("probe --cost: costs that vary, or a cost the limiter is never sent, exit 64") {
  const std::string redis = TestRedis::shared().tcp_url();
  const ProcessOutcome varying =
      run_rlcheck({"probe", "--redis", redis, "--strategy", "lua", "--cost", "1-3"});
  CHECK(varying.exit_code == 64);
  CHECK(varying.err.find("one cost throughout") != std::string::npos);
  const ProcessOutcome unsent =
      run_rlcheck({"probe", "--redis", redis, "--script",
                   std::string(RLCHECK_SOURCE_DIR) + "/examples/limiter_cost.lua", "--arg", "20",
                   "--arg", "1000", "--arg", "3", "--arg", "{uuid}", "--cost", "3"});
  CHECK(unsent.exit_code == 64);
  CHECK(unsent.err.find("{cost}") != std::string::npos);
}
