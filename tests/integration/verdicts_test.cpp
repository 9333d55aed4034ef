// Verdicts you can act on, against a real redis-server and real HTTP servers: a fail only where
// the run proves it, never a pass on nothing admitted, Retry-After as a minimum, and every
// "because" of a report backed by what rlcheck measured (a serial rerun for a race). Each case
// that claims "every time" runs its runs side by side, and checks each one.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fake_http_server.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/side_by_side.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// Database 9 keeps these keys apart from the other integration tests.
std::string redis_url() {
  return TestRedis::shared().tcp_url() + "/9";
}

// `rlcheck redis --json --redis <db 9> --script tests/fixtures/<script> <flags>`.
std::vector<std::string> script_args(const std::string& script, const std::string& flags) {
  std::vector<std::string> args{"redis",     "--json",   "--redis",
                                redis_url(), "--script", fixture(script)};
  append_words(args, flags);
  return args;
}

std::vector<std::string> http_args(const std::string& url, const std::string& flags) {
  std::vector<std::string> args{"http", url, "--json"};
  append_words(args, flags);
  return args;
}

const json* check_of(const json& report, const std::string& id) {
  for (const auto& check : report.at("checks")) {
    if (check.at("id") == id)
      return &check;
  }
  return nullptr;
}

constexpr const char* k_log_args = "--arg {limit} --arg {window_ms} --arg {uuid} ";

}  // namespace

TEST_CASE("key-ttl: a log or a bucket whose key outlives what it needs is a warning, no fail") {
  const std::vector<json> reports = run_side_by_side(
      {script_args("sliding_double_ttl.lua", std::string(k_log_args) + "-l 10 -w 60s -r 1"),
       script_args("bucket_double_ttl.lua",
                   "--arg 10 --arg 1 --arg 1000 -l 10 --contract token-bucket --burst 10 "
                   "--refill 1/s -n 30 -p 5 -r 1")},
      {0, 0});
  for (const json& report : reports) {
    const json* ttl = check_of(report, "key-ttl");
    REQUIRE(ttl != nullptr);
    INFO(ttl->dump());
    CHECK((*ttl)["status"] == "pass");
    CHECK((*ttl)["warning"] == true);
    const std::string detail = (*ttl)["detail"];
    CHECK(detail.find("no lock-out seen") != std::string::npos);
    CHECK(detail.find("locked out that long") == std::string::npos);
  }
  CHECK(check_detail(reports[0], "key-ttl").find("has a TTL of 2m; the 1m window needs at most") !=
        std::string::npos);
  // What the key holds, as Redis counts it.
  CHECK(reports[0]["runs"][0]["longest_key_ttl"]["memory_bytes"].get<int64_t>() > 0);
  CHECK(check_detail(reports[0], "key-ttl").find("bytes for this key, MEMORY USAGE") !=
        std::string::npos);
}

TEST_CASE("a bucket that refills 4/s where 5/s is promised fails utilisation in every run") {
  // rlcheck serve's token bucket, keyed on X-API-Key: each run and client an identity of its
  // own, which rlcheck cannot prove fresh (another test may have used it), so it reads the
  // bucket as low at the start as its admissions allow: the 5 admitted at once and one every
  // 250 ms after prove it started nearly full, and by 2 s a 5/s bucket has room it denied.
  const auto serve_of = [](const char* refill) {
    return std::vector<std::string>{
        "--redis", redis_url(), "--listen", "127.0.0.1:0", "--strategy",        "token-bucket",
        "--burst", "5",         "--refill", refill,        "--identity-header", "X-API-Key"};
  };
  ServeProcess under(serve_of("4/s"));
  ServeProcess exact(serve_of("5/s"));
  const std::string load =
      "--rate 20/s --duration 3s --contract token-bucket --burst 5 --refill 5/s --runs 10 ";
  const std::vector<json> reports =
      run_side_by_side({http_args(under.url(), load + "-H X-API-Key:under-{run}"),
                        http_args(exact.url(), load + "-H X-API-Key:exact-{run}")},
                       {1, 0});
  INFO(checks_of(reports[0]));
  CHECK(check_status(reports[0], "utilisation") == "fail");
  REQUIRE(reports[0]["runs"].size() == 10);
  for (const auto& run : reports[0]["runs"])
    CHECK(run["utilisation"]["denied_with_room"].get<int64_t>() > 0);
  INFO(checks_of(reports[1]));
  REQUIRE(reports[1]["runs"].size() == 10);
  for (const auto& run : reports[1]["runs"])
    CHECK(run["utilisation"]["denied_with_room"] == 0);
  CHECK(check_status(reports[1], "utilisation") == "pass");
}

TEST_CASE("nothing admitted is never a pass: an always-429 endpoint and a limit of 0") {
  FakeHttpServer always_429(FakeHttpServer::Mode::reply,
                            {429, {{"Retry-After", "60"}}, "slow down"});
  ServeProcess correct({"--redis", redis_url(), "--listen", "127.0.0.1:0", "--limit", "10",
                        "--window", "60s", "--identity-header", "X-API-Key"});
  // docs/ci.md's CI command, and an open model.
  const std::string burst = "-n 200 -p 50 -r 4 --limit 10 --window 60s ";
  const std::string open = "--rate 50/s --duration 1s -r 2 --limit 10 --window 60s ";
  const std::vector<json> reports = run_side_by_side(
      {http_args(always_429.url(), burst + "-H X-API-Key:ci-{run}"),
       http_args(always_429.url(), open + "-H X-API-Key:ci-{run}"),
       script_args("denies_everything.lua", "--arg {limit} --arg {window_ms} -l 10 -w 60s"),
       script_args("denies_everything.lua",
                   "--arg {limit} --arg {window_ms} -l 10 -w 60s --rate 50/s --duration 1s -r 2"),
       http_args(correct.url(), burst + "-H X-API-Key:burst-{run}"),
       http_args(correct.url(), open + "-H X-API-Key:open-{run}")},
      {3, 3, 1, 1, 0, 0});
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    const json* utilisation = check_of(reports[i], "utilisation");
    REQUIRE(utilisation != nullptr);
    INFO(utilisation->dump());
    CHECK((*utilisation)["status"] == "fail");
    const std::string detail = (*utilisation)["detail"];
    CHECK(detail.find("admitted none of its") != std::string::npos);
    // Over HTTP the identity may be an earlier test's: no verdict, and it says why.
    CHECK(utilisation->contains("inconclusive") == (i < 2));
    if (i < 2)
      CHECK(detail.find("{run} and {id} are the same in every invocation") != std::string::npos);
    else
      CHECK(detail.find("on limiter state of its own: the limiter admits nothing") !=
            std::string::npos);
  }
}

TEST_CASE(
    "Retry-After is a minimum: whole seconds rounded down fail both hint checks, every time") {
  // Limit 3 per 2.5 s, one request at a time (each denial surely after the admissions): the
  // slot frees 2.5 s after the first. Floored, the hints say 2 s, then 1 s a half second on,
  // and a client that obeys is denied again; ceiled, never early, it is admitted. Each hint is
  // read at four phases of its second, the earliest promise retried. Ten tests of each.
  const std::string flags =
      "--reply rate --arg {limit} --arg {window_ms} --arg {uuid} -l 3 -w 2500ms "
      "--max-retry-after 3s -n 6 -p 1 -r 1 --verify-retry-after";
  std::vector<std::vector<std::string>> runs;
  std::vector<int> expected;
  for (int i = 0; i < 10; ++i) {
    runs.push_back(script_args("replies/rate_floored_seconds.lua", flags));
    expected.push_back(1);
  }
  for (int i = 0; i < 10; ++i) {
    runs.push_back(script_args("replies/rate_whole_seconds.lua", flags));
    expected.push_back(0);
  }
  const std::vector<json> reports = run_side_by_side(runs, expected);
  for (size_t i = 0; i < reports.size(); ++i) {
    CAPTURE(i);
    INFO(checks_of(reports[i]));
    const bool floored = i < 10;
    CHECK(check_status(reports[i], "retry-after-accuracy") == (floored ? "fail" : "pass"));
    CHECK(check_status(reports[i], "retry-after-honest") == (floored ? "fail" : "pass"));
    CHECK(reports[i]["retry_verification"]["phases"] == 4);
  }
}

TEST_CASE("a retry_ms 5 minutes late fails under --virtual-clock --rate 1/s") {
  // Every instant a whole second apart makes every hint a whole number of seconds: that says
  // nothing of the unit, so they stay milliseconds and are judged as such (as whole seconds, 10 %
  // of the hour's window would forgive 5 minutes).
  const json report = json_report(
      script_args("late_retry_ms.lua",
                  "--arg {limit} --arg {window_ms} --arg {uuid} --arg {now_ms} -l 3 -w 1h "
                  "--max-retry-after 2h --virtual-clock --rate 1/s --duration 20s -r 1"),
      1);
  INFO(checks_of(report));
  CHECK(check_status(report, "retry-after-accuracy") == "fail");
  CHECK(check_detail(report, "retry-after-accuracy").find("so was every instant apart") !=
        std::string::npos);
  CHECK(check_status(report, "limit") == "pass");
}

TEST_CASE("an over-admission is called a race only when a serial rerun stays within the limit") {
  const std::vector<json> reports = run_side_by_side(
      {script_args("off_by_one.lua", std::string(k_log_args) + "-l 10 -w 60s"),
       {"redis", "--json", "--redis", redis_url(), "--strategy", "naive", "-n", "200", "-p", "50"}},
      {1, 1});
  const json& atomic = reports[0];
  INFO(checks_of(atomic));
  REQUIRE(atomic.contains("serial_rerun"));
  CHECK(atomic["serial_rerun"]["peak"] == 11);
  CHECK(atomic["serial_rerun"]["within_contract"] == false);
  const std::string limit = check_detail(atomic, "limit");
  CHECK(limit.find("admits 11 even one at a time") != std::string::npos);
  CHECK(limit.find("check-then-act") == std::string::npos);

  const json& naive = reports[1];
  INFO(checks_of(naive));
  REQUIRE(naive.contains("serial_rerun"));
  CHECK(naive["serial_rerun"]["peak"] == 10);
  CHECK(naive["serial_rerun"]["within_contract"] == true);
  CHECK(check_detail(naive, "limit").find("check-then-act race") != std::string::npos);
  // The rerun's keys are rlcheck's own, and deleted like every run's.
  CHECK(TestRedis::shared().keys("rlcheck:*").empty());
}
