// --virtual-clock against a real redis-server and an HTTP limiter of the test's own: limiters
// that take now as an argument, audited over virtual hours and days in a fraction of a second
// each. Every instant is virtual, so no verdict here depends on timing: a correct limiter
// passes and a broken one fails the same way on every machine. Database 11 keeps these keys
// apart from the other integration tests.

#include <doctest/doctest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fake_http_server.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string redis_url() {
  return TestRedis::shared().tcp_url() + "/11";
}

// `rlcheck redis --json --virtual-clock --script tests/fixtures/time/<script> <flags>`,
// exiting `expected`.
json run_virtual(const std::string& script, const std::string& flags, int expected) {
  std::vector<std::string> args{"redis",
                                "--json",
                                "--redis",
                                redis_url(),
                                "--virtual-clock",
                                "--script",
                                fixture("time/" + script)};
  append_words(args, flags);
  return json_report(args, expected);
}

// 10 per hour, one request a second for three virtual hours: 10 800 requests.
constexpr const char* k_hourly = "-l 10 -w 1h --rate 1/s --duration 3h -r 1 ";
constexpr const char* k_log_args = "--arg {limit} --arg {window_ms} --arg {now_ms} --arg {uuid}";

// 5, then 1 a minute, offered 2 a minute for a virtual day: 2 880 requests.
constexpr const char* k_daily_bucket =
    "-l 5 -w 5m --burst 5 --refill 1/1m --rate 2/1m --duration 24h -r 2 --verify-retry-after "
    "--arg 5 --arg 1 --arg 60000 --arg {now_ms} ";

}  // namespace

TEST_CASE("virtual clock: a correct client-time sliding log at 10 per hour passes 3 hours") {
  const json report = run_virtual("client_sliding_log.lua", k_hourly + std::string(k_log_args), 0);
  CHECK(report["params"]["clock"] == "virtual");
  CHECK(report["params"]["clock_note"].get<std::string>().find("TTL") != std::string::npos);
  // 3 h less the last second, to the millisecond: the audits judged virtual instants.
  CHECK(report["summary"]["virtual_span_ms"] == 10'799'000);
  const json& run = report["runs"][0];
  CHECK(run["virtual_span_ms"] == 10'799'000);
  CHECK(run["allowed"] == 30);  // 10 in each of the three hours, never more
  CHECK(run["denied"] == 10'770);
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
}

TEST_CASE("virtual clock: a sliding log that never evicts fails utilisation, not contract") {
  const json report =
      run_virtual("client_sliding_log_no_evict.lua", k_hourly + std::string(k_log_args), 1);
  CHECK(report["runs"][0]["allowed"] == 10);  // the first hour's, then never again
  CHECK(check_status(report, "utilisation") == "fail");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "limit") == "pass");
}

TEST_CASE("virtual clock: a window passed in seconds where ms are read fails contract and limit") {
  // {window_s} is 3600: read as milliseconds, entries leave after 3.6 s instead of an hour.
  const json report = run_virtual(
      "client_sliding_log.lua",
      k_hourly + std::string("--arg {limit} --arg {window_s} --arg {now_ms} --arg {uuid}"), 1);
  CHECK(check_status(report, "contract") == "fail");
  CHECK(check_status(report, "limit") == "fail");
  CHECK(report["runs"][0]["allowed"].get<int64_t>() > 3000);
}

TEST_CASE("virtual clock: a client-time token bucket and GCRA pass a virtual day, hints honest") {
  for (const auto& [script, contract] : std::map<std::string, std::string>{
           {"client_token_bucket.lua", "token-bucket"}, {"client_gcra.lua", "gcra"}}) {
    CAPTURE(script);
    const json report =
        run_virtual(script, k_daily_bucket + std::string("--contract ") + contract, 0);
    CHECK(report["params"]["contract"] == contract);
    CHECK(report["summary"]["virtual_span_ms"] == 86'370'000);  // 2 880 requests 30 s apart
    for (const json& run : report["runs"]) {
      // The burst, then one a minute for the rest of the day (1 439 minutes after the first).
      CHECK(run["allowed"] == 5 + 1439);
    }
    CHECK(check_status(report, "contract") == "pass");
    CHECK(check_status(report, "utilisation") == "pass");
    CHECK(check_status(report, "retry-after-honest") == "pass");
    // The retry went out exactly as long after the denial as the hint said, on the virtual
    // clock: a 30 s wait that cost nothing.
    const json& verification = report["retry_verification"];
    CHECK(verification["waited_ms"] == verification["told_ms"]);
    CHECK(verification["told_ms"] == 30'000);
    CHECK(verification["allowed"] == true);
  }
}

TEST_CASE("virtual clock: an HTTP limiter told now in its URL passes 3 virtual hours") {
  // A sliding log of 10 an hour keyed by nothing (one identity), deciding at ?now=<ms>.
  std::deque<int64_t> admitted;  // admission instants, oldest first (the server's thread only)
  constexpr int64_t k_window_ms = 3'600'000;
  FakeHttpServer server([&](const ReceivedRequest& request) -> FakeHttpServer::Response {
    const size_t at = request.target.find("now=");
    if (at == std::string::npos)
      return {400, {}, "no now"};
    const int64_t now = std::stoll(request.target.substr(at + 4));
    while (!admitted.empty() && admitted.front() <= now - k_window_ms)
      admitted.pop_front();
    if (admitted.size() < 10) {
      admitted.push_back(now);
      return {200, {}, "ok"};
    }
    const int64_t wait_ms = admitted.front() + k_window_ms - now;
    return {429, {{"Retry-After", std::to_string((wait_ms + 999) / 1000)}}, "slow down"};
  });
  std::vector<std::string> args{"http", server.url("/?now={now_ms}"), "--json", "--virtual-clock"};
  append_words(args, k_hourly);
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stderr: " << outcome.err);
  INFO("stdout: " << outcome.out);
  REQUIRE(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK(report["params"]["clock"] == "virtual");
  CHECK(report["runs"][0]["allowed"] == 30);
  // The limiter was told the time: no clock of its own is read around the run.
  CHECK_FALSE(report["runs"][0].contains("limiter_clock"));
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
  // The server saw every virtual instant, in order, a second apart.
  const std::vector<ReceivedRequest> requests = server.requests();
  REQUIRE(requests.size() == 10'800);
  const auto now_of = [](const ReceivedRequest& request) {
    return std::stoll(request.target.substr(request.target.find("now=") + 4));
  };
  CHECK(now_of(requests.back()) - now_of(requests.front()) == 10'799'000);
}

TEST_CASE("virtual clock: what it cannot make virtual is a usage error naming the reason") {
  const std::string log = fixture("time/client_sliding_log.lua");
  struct Refusal {
    std::string flags;
    std::string reason;
  };
  const std::vector<Refusal> refusals{
      {"redis --strategy lua --rate 1/s --duration 1h", "Redis TIME and TTLs"},
      {"redis --script " + std::string(RLCHECK_SOURCE_DIR) + "/lua/sliding_window.lua" +
           " --arg {limit} --arg {window_ms} --arg {now_ms} --rate 1/s --duration 1h",
       "calls TIME (line"},
      {"redis --script " + log + " --arg {limit} --arg {window_ms} --rate 1/s --duration 1h",
       "never told the time"},
      {"redis --script " + log + " --arg {now_ms} -n 100", "needs a schedule"},
      {"redis --script " + log + " --arg {now_ms} --interval 100000h -n 1000",
       "at most 100 virtual years"},
      {"redis --script " + log + " --arg {now_ms} --rate 1/s --duration 1h --fault pause@1s+1s",
       "not with --fault"},
      {"redis --script " + log + " --arg {now_ms} --rate 1/s --duration 1h --workers 2 " +
           "--worker-index 0 --coordinator redis://127.0.0.1:1 --session s",
       "not with --workers"},
      {"compare --strategies lua --rate 1/s --duration 1h", "not with compare"},
      {"http http://127.0.0.1:1/ --rate 1/s --duration 1h", "never told the time"},
  };
  for (const Refusal& refusal : refusals) {
    CAPTURE(refusal.flags);
    std::vector<std::string> args;
    append_words(args, refusal.flags + " --virtual-clock --redis " + redis_url());
    if (refusal.flags.starts_with("http"))
      args.resize(args.size() - 2);  // an HTTP target has no --redis
    const ProcessOutcome outcome = run_rlcheck(args);
    CHECK(outcome.exit_code == 64);
    CHECK(outcome.err.find("--virtual-clock: ") != std::string::npos);
    CHECK(outcome.err.find(refusal.reason) != std::string::npos);
  }
}

TEST_CASE("virtual clock: probe finds an hour-long window and an hourly refill, flags that pass") {
  struct Case {
    std::string script;
    std::string args;
    std::string algorithm;
    std::string flags;
    std::string load;  // what the pasted-back run offers
  };
  const std::vector<Case> cases{
      {"client_sliding_log.lua", "--arg 10 --arg 3600000 --arg {now_ms} --arg {uuid}", "sliding",
       "--contract sliding --limit 10 --window 3600s", "--rate 1/s --duration 5h"},
      {"client_gcra.lua", "--arg 5 --arg 1 --arg 3600000 --arg {now_ms}", "token-bucket",
       "--contract token-bucket --burst 5 --refill 1/3600s", "--rate 2/1h --duration 120h"},
  };
  for (const Case& each : cases) {
    CAPTURE(each.script);
    std::vector<std::string> probe{"probe",
                                   "--redis",
                                   redis_url(),
                                   "--json",
                                   "--virtual-clock",
                                   "--script",
                                   fixture("time/" + each.script)};
    append_words(probe, each.args + " --max-time 60s");
    const ProcessOutcome probed = run_rlcheck(probe);
    INFO("stdout: " << probed.out);
    REQUIRE(probed.exit_code == 0);
    const json inferred = json::parse(probed.out);
    CHECK(inferred["clock"] == "virtual");
    CHECK(inferred["algorithm"] == each.algorithm);
    REQUIRE(inferred["flags"] == each.flags);
    // The flags, pasted back into a virtual run of days: a pass.
    run_virtual(each.script, each.args + " -r 1 " + each.flags + " " + each.load, 0);
  }
}

TEST_CASE("virtual clock: a client-time sliding log under +800ms of skew fails contract, named") {
  // Under the virtual clock an identity's requests alternate between the two clocks.
  const json report = run_virtual(
      "client_sliding_log.lua",
      "-l 5 -w 2s --rate 20/s --duration 1h -r 1 --clock-skew 0,+800ms " + std::string(k_log_args),
      1);
  CHECK(check_status(report, "contract") == "fail");
  CHECK(check_detail(report, "contract").find("on one +800ms off") != std::string::npos);
}
