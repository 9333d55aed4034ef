// `rlcheck probe` against `rlcheck serve` with each strategy, against a server whose headers
// advertise a limit it does not keep, and against Redis limiters directly: the algorithm is
// right, the limit or burst exact, the window or refill within 10 %.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fake_http_server.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// serve on database 1 of the shared redis-server, as http_serve_test does: its keys outlive it.
ServeProcess serve(const std::string& strategy, int limit, const std::string& window,
                   const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"--redis",           TestRedis::shared().tcp_url() + "/1",
                                "--listen",          "127.0.0.1:0",
                                "--strategy",        strategy,
                                "--limit",           std::to_string(limit),
                                "--window",          window,
                                "--identity-header", "X-API-Key"};
  args.insert(args.end(), extra.begin(), extra.end());
  return ServeProcess(args);
}

struct Probed {
  ProcessOutcome outcome;
  json report;
};

Probed probe(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"probe"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  Probed probed{run_rlcheck(argv), json()};
  INFO("stdout: " << probed.outcome.out);
  INFO("stderr: " << probed.outcome.err);
  REQUIRE_FALSE(probed.outcome.timed_out);
  probed.report = json::parse(probed.outcome.out, nullptr, false);
  REQUIRE_FALSE(probed.report.is_discarded());
  return probed;
}

Probed probe_http(const ServeProcess& server) {
  return probe({server.url(), "-H", "X-API-Key: probe-{run}", "--max-time", "30s"});
}

void check_within_10_percent(const json& measured, double expected) {
  REQUIRE(measured.is_number());
  CHECK(measured.get<double>() >= expected * 0.9);
  CHECK(measured.get<double>() <= expected * 1.1);
}

void check_window(const Probed& probed, const std::string& algorithm, int limit, double window_ms) {
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(probed.report["schema"] == "rlcheck.probe/v1");
  CHECK(probed.report["algorithm"] == algorithm);
  CHECK(probed.report["limit"] == limit);
  check_within_10_percent(probed.report["window_ms"], window_ms);
  CHECK(probed.report["burst"].is_null());
  CHECK(probed.report["flags"].get<std::string>().starts_with("--contract " + algorithm +
                                                              " --limit " + std::to_string(limit)));
}

void check_bucket(const Probed& probed, int burst, double refill_per_s) {
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(probed.report["algorithm"] == "token-bucket");
  CHECK(probed.report["burst"] == burst);
  check_within_10_percent(probed.report["refill_per_s"], refill_per_s);
  CHECK(probed.report["limit"].is_null());
}

}  // namespace

TEST_CASE("probe http: serve's sliding window, 1 s and 2 s, limit exact, window within 10 %") {
  SUBCASE("1s") {
    ServeProcess server = serve("lua", 5, "1s");
    const Probed probed = probe_http(server);
    check_window(probed, "sliding", 5, 1000);
    CHECK(probed.report["advertised"] == json{{"limit", 5}, {"window_ms", 1000}});
    CHECK(probed.report["advertised_matches"] == true);
  }
  SUBCASE("2s") {
    ServeProcess server = serve("lua", 3, "2s");
    check_window(probe_http(server), "sliding", 3, 2000);
  }
}

TEST_CASE("probe http: serve's fixed window is told from a sliding one") {
  SUBCASE("1s") {
    ServeProcess server = serve("fixed-window", 5, "1s");
    const Probed probed = probe_http(server);
    check_window(probed, "fixed", 5, 1000);
    CHECK(probed.report["advertised_matches"] == true);
  }
  SUBCASE("3s") {
    ServeProcess server = serve("fixed-window", 4, "3s");
    check_window(probe_http(server), "fixed", 4, 3000);
  }
}

TEST_CASE("probe http: serve's token bucket and GCRA, burst exact, refill within 10 %") {
  SUBCASE("token-bucket") {
    ServeProcess server = serve("token-bucket", 5, "1s");
    const Probed probed = probe_http(server);
    check_bucket(probed, 5, 5.0);
    CHECK(probed.report["advertised_matches"] == true);
  }
  SUBCASE("token-bucket over 5 s: 5 then 1/s") {
    ServeProcess server = serve("token-bucket", 5, "5s");
    check_bucket(probe_http(server), 5, 1.0);
  }
  SUBCASE("gcra: the same contract from outside, said so") {
    ServeProcess server = serve("gcra", 4, "1s", {"--refill", "8/s"});
    const Probed probed = probe_http(server);
    check_bucket(probed, 4, 8.0);
    CHECK(probed.report["notes"].dump().find("GCRA") != std::string::npos);
  }
}

TEST_CASE("probe http: serve advertises its bucket's burst, not its --limit, and probe agrees") {
  // --limit 5 with a bucket of 3: serve advertises q=3 (the burst), which is what it keeps.
  ServeProcess server = serve("token-bucket", 5, "1s", {"--burst", "3", "--refill", "5/s"});
  const Probed probed = probe_http(server);
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(probed.report["burst"] == 3);
  CHECK(probed.report["advertised"]["limit"] == 3);
  CHECK(probed.report["advertised_matches"] == true);
}

TEST_CASE("probe http: a server that advertises a limit and never denies exits 1") {
  FakeHttpServer server(FakeHttpServer::Mode::reply,
                        {200, {{"X-RateLimit-Limit", "5"}, {"RateLimit-Policy", "5;w=1"}}, "{}"});
  const Probed probed = probe({server.url("/?k={run}"), "--max-time", "30s"});
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 1);
  CHECK(probed.report["algorithm"] == "none");
  CHECK(probed.report["advertised"]["limit"] == 5);
  CHECK(probed.report["advertised_matches"] == false);
  CHECK(probed.report["contradictions"][0] ==
        "the headers advertise a limit of 5 but no request was denied");
}

TEST_CASE("probe --redis: the built-in strategies directly") {
  const std::string redis = TestRedis::shared().tcp_url();
  SUBCASE("sliding window") {
    check_window(probe({"--redis", redis, "--strategy", "lua", "-l", "4", "-w", "1s"}), "sliding",
                 4, 1000);
  }
  SUBCASE("token bucket") {
    const Probed probed =
        probe({"--redis", redis, "--strategy", "token-bucket", "--burst", "6", "--refill", "10/s"});
    check_bucket(probed, 6, 10.0);
    CHECK(probed.report["advertised"] == json::object());
    CHECK(probed.report["advertised_matches"].is_null());
  }
  SUBCASE("fixed window") {
    check_window(probe({"--redis", redis, "--strategy", "fixed-window", "-l", "3", "-w", "1s"}),
                 "fixed", 3, 1000);
  }
}

TEST_CASE("probe: a window longer than --max-time cannot be told: exit 3, and why") {
  const Probed probed = probe({"--redis", TestRedis::shared().tcp_url(), "--strategy", "lua", "-l",
                               "3", "-w", "60s", "--max-time", "1s"});
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 3);
  CHECK(probed.report["algorithm"] == "unknown");
  CHECK(probed.report["reason"].get<std::string>().find("--max-time") != std::string::npos);
  CHECK(probed.report["limit"].is_null());
}

TEST_CASE("probe: usage errors name the flag") {
  const ProcessOutcome no_run = run_rlcheck({"probe", "http://127.0.0.1:1/"});
  CHECK(no_run.exit_code == 64);
  CHECK(no_run.err.find("{run}") != std::string::npos);
  const ProcessOutcome bad_time =
      run_rlcheck({"probe", "--redis", TestRedis::shared().tcp_url(), "--max-time", "soon"});
  CHECK(bad_time.exit_code == 64);
  CHECK(bad_time.err.find("--max-time") != std::string::npos);
  const ProcessOutcome runs_only = run_rlcheck({"probe", "--reset-cmd", "true"});
  CHECK(runs_only.exit_code == 64);
}
