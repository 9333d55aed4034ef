// What the reports say, and the checks that need a whole run to fail.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

TEST_CASE("a script that forgets EXPIRE fails key-ttl") {
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--script",
                   fixture("incr_no_expire.lua"), "--arg", "{limit}", "--json", "-r", "1"});
  CHECK(outcome.exit_code == 1);
  const json report = json::parse(outcome.out);
  CHECK(check_status(report, "key-ttl") == "fail");
  CHECK(check_status(report, "limit") == "pass");
  CHECK(report["runs"][0]["keys_without_ttl"].size() == 1);
}

// EXPIRE given the window in milliseconds: a 1 s window's key lives 1000 s. A sliding log's
// decisions stay right (it evicts by score), so the TTL is a warning that names it, not a fail;
// a counter whose count outlives its window locks a client out once the window has room again,
// and an open-model load that spans the window shows it: a fail. The shipped strategies keep
// their keys no longer than the window (or the bucket's refill) under the same flags.
TEST_CASE("a TTL in the wrong unit: a warning on a log, a fail where the run shows the lock-out") {
  const std::vector<std::string> base{"redis",   "--redis", TestRedis::shared().tcp_url(),
                                      "--limit", "10",      "--window",
                                      "1s",      "--json"};
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--script", fixture("expire_in_seconds.lua")});
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK(check_status(report, "key-ttl") == "pass");
  CHECK(check_status(report, "limit") == "pass");
  const std::string detail = check_detail(report, "key-ttl");
  INFO("key-ttl: " << detail);
  CHECK(detail.find("warning: ") == 0);
  CHECK(detail.find("has a TTL of 16m 40s; the 1s window needs at most 2s: no lock-out seen") !=
        std::string::npos);
  CHECK(detail.find("rlcheck:") != std::string::npos);
  CHECK(check_json(report, "key-ttl").value("warning", false));
  CHECK(report["runs"][0]["longest_key_ttl"]["ttl_ms"].get<int64_t>() > 999'000);
  CHECK(TestRedis::shared().keys("rlcheck:*").empty());  // its own keys are still deleted

  // INCR + PEXPIRE of ten windows, under a load that spans three: denied with room, 1 s on.
  std::vector<std::string> counter = base;
  counter.insert(counter.end(), {"--script", fixture("counter_ttl_tenfold.lua"), "--arg", "{limit}",
                                 "--arg", "{window_ms}", "--contract", "fixed", "--anchor",
                                 "first-hit", "--rate", "20/s", "--duration", "3s", "-r", "1"});
  const ProcessOutcome locked = run_rlcheck(counter);
  INFO("stderr: " << locked.err);
  CHECK(locked.exit_code == 1);
  const json locked_report = json::parse(locked.out);
  const std::string locked_detail = check_detail(locked_report, "key-ttl");
  INFO("key-ttl: " << locked_detail);
  CHECK(check_status(locked_report, "key-ttl") == "fail");
  CHECK(locked_detail.find("the 1s window needs at most 2s, and run 1 was denied request") !=
        std::string::npos);
  CHECK(locked_detail.find("while the contract had room") != std::string::npos);
  CHECK(check_status(locked_report, "utilisation") == "fail");

  for (const char* strategy :
       {"naive", "incr-expire", "fixed-window", "sliding-window", "token-bucket", "gcra"}) {
    CAPTURE(std::string(strategy));
    std::vector<std::string> shipped = base;
    shipped.insert(shipped.end(), {"--strategy", strategy});
    const ProcessOutcome ran = run_rlcheck(shipped);
    const json shipped_report = json::parse(ran.out);
    INFO("key-ttl: " << check_detail(shipped_report, "key-ttl"));
    CHECK(check_status(shipped_report, "key-ttl") == "pass");
    CHECK(shipped_report["runs"][0]["longest_key_ttl"]["ttl_ms"].get<int64_t>() <= 1000);
  }
}

TEST_CASE("--report writes the same JSON document that --json prints") {
  const std::string path =
      (std::filesystem::temp_directory_path() / "rlcheck-report-test.json").string();
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--report", path, "-q"});
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.out == "PASS\n");
  std::ifstream in(path);
  const json report = json::parse(in);
  std::filesystem::remove(path);
  CHECK(report["schema"] == "rlcheck.report/v1");
  CHECK(report["params"]["requests"] == 200);
  CHECK(report["params"]["concurrency"] == 50);
  CHECK(report["params"]["runs"] == 4);
  CHECK(report["params"]["limit"] == 10);
  CHECK(report["params"]["window_ms"] == 60000);
  CHECK(report["runs"].size() == 4);
  for (const char* id : {"limit", "exact", "retry-after-present", "retry-after-valid",
                         "retry-after-bound", "key-ttl", "errors"}) {
    CHECK(check_status(report, id) != "absent");
  }
}

TEST_CASE("the human report has a header, a row per run, the checks and the verdict") {
  const ProcessOutcome outcome = run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(),
                                              "--strategy", "naive", "--color", "never"});
  CHECK(outcome.exit_code == 1);
  const auto lines = lines_of(outcome.out);
  REQUIRE(lines.size() >= 1 + 1 + 4 + 1 + 7 + 1);
  CHECK(lines[0].find("naive") != std::string::npos);
  CHECK(lines[0].find("limit 10 per 1m") != std::string::npos);
  CHECK(lines.back().rfind("FAIL: limit:", 0) == 0);
  CHECK(outcome.out.find("✗ limit") != std::string::npos);
  CHECK(outcome.out.find("\033[") == std::string::npos);
}

TEST_CASE("compare puts naive and lua side by side under the same load") {
  const ProcessOutcome text =
      run_rlcheck({"compare", "--redis", TestRedis::shared().tcp_url(), "--color", "never"});
  CHECK(text.exit_code == 1);  // naive broke the limit
  CHECK(text.out.find("naive") != std::string::npos);
  CHECK(text.out.find("sliding-window") != std::string::npos);
  // Each row names the checks that failed: naive's over-admission fails `limit`.
  bool naive_row = false;
  for (const std::string& line : lines_of(text.out)) {
    if (!line.starts_with("naive "))
      continue;
    naive_row = true;
    const std::string failed = line.substr(line.rfind(' ') + 1);
    CHECK(failed.find("limit") != std::string::npos);
  }
  CHECK(naive_row);

  const ProcessOutcome quiet =
      run_rlcheck({"compare", "--redis", TestRedis::shared().tcp_url(), "-q", "--color", "never"});
  CHECK(quiet.exit_code == 1);
  const auto verdicts = lines_of(quiet.out);
  REQUIRE(verdicts.size() == 2);
  CHECK(verdicts[0].starts_with("naive: FAIL: "));
  CHECK(verdicts[1] == "sliding-window: PASS");

  const ProcessOutcome js = run_rlcheck({"compare", "--redis", TestRedis::shared().tcp_url(),
                                         "--strategies", "naive,gcra,lua", "--json"});
  const json report = json::parse(js.out);
  CHECK(report["schema"] == "rlcheck.compare/v1");
  CHECK(report["verdict"] == "fail");  // the worst of the three
  CHECK(report["exit_code"] == 1);
  REQUIRE(report["reports"].size() == 3);
  CHECK(report["reports"][0]["verdict"] == "fail");
  CHECK(report["reports"][1]["verdict"] == "pass");
  CHECK(report["reports"][2]["verdict"] == "pass");
  for (const auto& each : report["reports"])
    CHECK(each["params"]["requests"] == 200);
}

TEST_CASE("paced like the seed: 3 per 3s, one call every 0.4s, the 4th is denied") {
  const ProcessOutcome outcome = run_rlcheck(
      {"redis", "--redis", TestRedis::shared().tcp_url(), "--strategy", "lua", "--limit", "3",
       "--window", "3s", "--interval", "400ms", "-n", "4", "-p", "1", "-r", "1", "--json"});
  REQUIRE(outcome.exit_code == 0);
  const json run = json::parse(outcome.out)["runs"][0];
  CHECK(run["allowed"] == 3);
  CHECK(run["denied"] == 1);
  // The oldest admission leaves the window 3 s after it was made, and the 4th call left
  // 1.2 s after the first: at most 1.8 s (+1 ms of Redis' millisecond rounding) to wait.
  const double retry_s = run["retry_after_s"]["max"].get<double>();
  CHECK(retry_s > 0.0);
  CHECK(retry_s <= 1.801);
  CHECK(run["duration_ms"].get<double>() >= 1200.0);
}
