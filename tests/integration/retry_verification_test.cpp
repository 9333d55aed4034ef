// --verify-retry-after against real `rlcheck serve` processes: the seed's sliding window tells
// the truth (a retry made exactly when told is allowed), a server whose Retry-After is too short
// is caught (the retry is denied again).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/fake_http_server.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// serve on the shared redis-server, database 1 (serve's keys outlive it until their TTL).
std::vector<std::string> serve_args(const std::vector<std::string>& limiter) {
  std::vector<std::string> args{"--redis",           TestRedis::shared().tcp_url() + "/1",
                                "--listen",          "127.0.0.1:0",
                                "--limit",           "5",
                                "--identity-header", "X-API-Key"};
  args.insert(args.end(), limiter.begin(), limiter.end());
  return args;
}

// An identity no other test or earlier run of this one has used.
std::string fresh_identity(const std::string& name) {
  static int counter = 0;
  return name + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

json run_verified(const ServeProcess& server, const std::string& identity,
                  const std::vector<std::string>& extra, int expected_exit) {
  std::vector<std::string> args{"http",
                                server.url(),
                                "-H",
                                "X-API-Key: " + identity + "-{id}",
                                "--limit",
                                "5",
                                "-n",
                                "20",
                                "-p",
                                "5",
                                "--verify-retry-after",
                                "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  REQUIRE_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == expected_exit);
  return json::parse(outcome.out);
}

}  // namespace

TEST_CASE("--verify-retry-after: serve --strategy lua's Retry-After is honest, per identity") {
  ServeProcess server(serve_args({"--strategy", "lua", "--window", "2s"}));
  const json report =
      run_verified(server, fresh_identity("honest"), {"--window", "2s", "--identities", "2"}, 0);
  CHECK(check_status(report, "retry-after-honest") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
  const json& verification = report.at("retry_verification");
  CHECK(verification.at("allowed") == true);
  // Retry-After is whole seconds: the wait was at least what the server said.
  CHECK(verification.at("waited_ms").get<int64_t>() >= verification.at("told_ms").get<int64_t>());
  CHECK(verification.at("told_ms").get<int64_t>() <= 2000);
  // The 20 requests went to two identities, 5 allowed each.
  CHECK(report.at("runs").at(0).at("allowed") == 10);
}

TEST_CASE("--verify-retry-after: a Retry-After of 1 s on a 30 s window is caught") {
  ServeProcess server(serve_args({"--script", fixture("short_retry_hint.lua"), "--window", "30s"}));
  const json report = run_verified(server, fresh_identity("short"), {"--window", "30s"}, 1);
  CHECK(check_status(report, "retry-after-honest") == "fail");
  CHECK(report.at("retry_verification").at("told_ms") == 1000);
  CHECK(report.at("retry_verification").at("allowed") == false);
  // The hints are early by far more than a second against the window the admissions fill.
  CHECK(check_status(report, "retry-after-accuracy") == "fail");
  CHECK(check_status(report, "limit") == "pass");
}

TEST_CASE("--verify-retry-after skips when no identity ended its run denied") {
  ServeProcess server(serve_args({"--strategy", "lua", "--window", "2s"}));
  const ProcessOutcome outcome =
      run_rlcheck({"http", server.url(), "-H", "X-API-Key: " + fresh_identity("calm"), "--limit",
                   "5", "--window", "2s", "-n", "3", "-p", "1", "--verify-retry-after", "--json"});
  REQUIRE_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK(check_status(report, "retry-after-honest") == "skip");
}

TEST_CASE("--verify-retry-after does not wait for a hint beyond --max-retry-after") {
  // Every answer is 429 with Retry-After: 1973998 (milliseconds sent as seconds: 23 days).
  FakeHttpServer server(FakeHttpServer::Mode::reply,
                        {429, {{"Retry-After", "1973998"}}, "slow down"});
  RunOptions options;
  options.limit = std::chrono::seconds(20);  // waiting would be a hang, killed here
  const ProcessOutcome outcome =
      run_rlcheck({"http", server.url(), "--limit", "5", "--window", "60s", "-n", "3", "-p", "1",
                   "--verify-retry-after", "--json"},
                  options);
  INFO("stderr: " << outcome.err);
  REQUIRE_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == 1);
  CHECK(outcome.err.find("retrying in") == std::string::npos);
  const json report = json::parse(outcome.out);
  CHECK(check_status(report, "retry-after-bound") == "fail");
  CHECK(check_status(report, "retry-after-honest") == "skip");
  std::string detail;
  for (const auto& check : report.at("checks")) {
    if (check.at("id") == "retry-after-honest")
      detail = check.at("detail").get<std::string>();
  }
  CHECK(detail == "told 1973998000ms, more than --max-retry-after 1m; not waited");
  CHECK(server.requests().size() == 3);  // the run's requests, and no retry
}

TEST_CASE("--verify-retry-after: an explicit --max-retry-after bounds the wait too") {
  ServeProcess server(serve_args({"--script", fixture("short_retry_hint.lua"), "--window", "30s"}));
  // short_retry_hint tells 1 s; a bound of 500ms puts even that beyond what is waited for.
  const json report = run_verified(server, fresh_identity("bounded"),
                                   {"--window", "30s", "--max-retry-after", "500ms"}, 1);
  CHECK(check_status(report, "retry-after-honest") == "skip");
  CHECK_FALSE(report.contains("retry_verification"));
}
