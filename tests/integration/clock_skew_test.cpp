// --clock-skew and --time-source against a real redis-server: a limiter that takes `now` from
// its callers over-admits when their clocks disagree by less than a second, and rlcheck, judging
// on its own clock, fails it and names the skew; the same limiter on Redis TIME passes the same
// load. The failure is structural, not load luck: with -p 2 the two connections alternate, so
// the one 800 ms ahead evicts the other's admissions 800 ms early in every window.

#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// 5 per 2 s at 20/s for 4 s over two connections, one clock on time and one 800 ms ahead.
constexpr const char* k_skewed_load =
    "-l 5 -w 2s --rate 20/s --duration 4s -p 2 --seed 7 --clock-skew 0,+800ms";

json run_json(std::vector<std::string> args, const std::string& flags, int expected_exit) {
  args.insert(args.begin() + 1, {"--redis", TestRedis::shared().tcp_url(), "--json"});
  append_words(args, flags);
  return json_report(args, expected_exit);
}

}  // namespace

TEST_CASE("a sliding log on the callers' clocks fails contract under +800ms of skew, named") {
  const std::string records = (std::filesystem::temp_directory_path() /
                               ("rlcheck_skew_" + std::to_string(getpid()) + ".jsonl"))
                                  .string();
  const json report = run_json(
      {"redis", "--script", fixture("time/client_sliding_log.lua"), "--arg", "{limit}", "--arg",
       "{window_ms}", "--arg", "{now_ms}", "--arg", "{uuid}", "--records", records},
      std::string(k_skewed_load) + " -r 1", 1);
  INFO(checks_of(report));
  CHECK(check_status(report, "contract") == "fail");
  const std::string detail = check_detail(report, "contract");
  CHECK(detail.find("--clock-skew 0,+800ms: of the span's") != std::string::npos);
  CHECK(detail.find("on one +800ms off") != std::string::npos);
  CHECK(report["params"]["clock_skew_ms"] == json::array({0, 800}));
  CHECK(report["params"]["clock_skew_read"] == true);
  // Every request says which clock sent it, and both clocks sent some.
  std::set<int> skews;
  std::ifstream lines(records);
  for (std::string line; std::getline(lines, line);)
    skews.insert(json::parse(line).at("skew_ms").get<int>());
  std::filesystem::remove(records);
  CHECK(skews == std::set<int>{0, 800});
}

TEST_CASE("the same sliding log on Redis TIME passes the same skewed load") {
  const json report =
      run_json({"redis", "--script", std::string(RLCHECK_SOURCE_DIR) + "/lua/sliding_window.lua",
                "--arg", "{limit}", "--arg", "{window_ms}", "--arg", "{uuid}"},
               std::string(k_skewed_load) + " -r 1", 0);
  INFO(checks_of(report));
  CHECK(check_status(report, "contract") == "pass");
  CHECK(report["params"]["clock_skew_ms"] == json::array({0, 800}));
  // It asks Redis for the time: the skewed clocks reached none of its decisions, and it says so.
  CHECK(report["params"]["clock_skew_read"] == false);
}

TEST_CASE("compare runs the built-in on Redis TIME and on the client's clock side by side") {
  const json compare = run_json({"compare", "--strategies", "lua", "--time-source", "redis,client"},
                                std::string(k_skewed_load) + " -r 1", 1);
  REQUIRE(compare["schema"] == "rlcheck.compare/v1");
  REQUIRE(compare["reports"].size() == 2);
  const json& redis_time = compare["reports"][0];
  const json& client_time = compare["reports"][1];
  INFO(checks_of(redis_time));
  INFO(checks_of(client_time));
  CHECK(redis_time["target"]["strategy"] == "sliding-window");
  CHECK(redis_time["target"]["time_source"] == "redis");
  CHECK(redis_time["verdict"] == "pass");
  CHECK(client_time["target"]["strategy"] == "sliding-window");
  CHECK(client_time["target"]["time_source"] == "client");
  CHECK(client_time["verdict"] == "fail");
  CHECK(check_status(client_time, "contract") == "fail");
  CHECK(check_detail(client_time, "contract").find("+800ms") != std::string::npos);
}

TEST_CASE("each built-in on the client's clock keeps its contract while the clocks agree") {
  for (const char* strategy : {"sliding-window", "token-bucket", "gcra", "sliding-counter"}) {
    const std::string name = strategy;
    CAPTURE(name);
    const json report =
        run_json({"redis", "--strategy", strategy, "--time-source", "client"}, "-r 2", 0);
    CHECK(report["target"]["time_source"] == "client");
    for (const auto& run : report["runs"]) {
      CHECK(run["allowed"] == 10);
      CHECK(run["errors"] == 0);
    }
    CHECK(check_status(report, "retry-after-accuracy") == "pass");
    CHECK(check_status(report, "key-ttl") == "pass");
  }
}
