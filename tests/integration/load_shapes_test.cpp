// --stages and --arrivals poisson against the test redis-server: the load each plans, checked
// from the records' due_us (exact: when each request was due, whatever the machine did), the
// per-stage figures of the report, and the checks keeping their verdicts under a shaped load.
// Database 13 keeps these keys apart from the other integration tests.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string redis_url() {
  return TestRedis::shared().tcp_url() + "/13";
}

std::string records_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("rlcheck-shapes-" + std::to_string(getpid()) + "-" + name))
      .string();
}

// Every line of a --records JSON-lines file, parsed; the file is removed.
std::vector<json> read_records(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> records;
  for (std::string line; std::getline(in, line);)
    records.push_back(json::parse(line));
  std::filesystem::remove(path);
  return records;
}

}  // namespace

TEST_CASE("load shapes: --stages ramps as planned, counted from due_us, and lua still passes") {
  const std::string path = records_file("stages.jsonl");
  const json report =
      json_report({"redis", "--redis", redis_url(), "--json", "--stages",
                   "2s:100/s,2s:400/s,1s:0/s", "-r", "1", "--records", path, "--seed", "7"},
                  0);
  INFO(checks_of(report));
  CHECK(report["params"]["requests"] == 800);
  CHECK(report["params"]["duration_ms"] == 5000);
  CHECK(report["params"]["arrivals"] == "uniform");
  CHECK(report["params"]["stages"] == json::parse(R"([{"duration_ms":2000.0,"target_per_s":100.0},
                        {"duration_ms":2000.0,"target_per_s":400.0},
                        {"duration_ms":1000.0,"target_per_s":0.0}])"));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");

  // Due in each second of the plan: the integral of the ramps (0->100/s, 100->400/s, 400->0/s).
  const std::vector<json> records = read_records(path);
  REQUIRE(records.size() == 800);
  std::vector<int> per_second(5, 0);
  for (const json& record : records) {
    const int64_t due_us = record.at("due_us");
    REQUIRE(due_us >= 0);
    REQUIRE(due_us < 5'000'000);
    ++per_second[static_cast<size_t>(due_us / 1'000'000)];
    CHECK(record.at("wall_ms").get<int64_t>() > 1'700'000'000'000);
    CHECK(record.at("worker") == 0);
  }
  const std::vector<int> planned{25, 75, 175, 325, 200};
  for (size_t second = 0; second < planned.size(); ++second) {
    CAPTURE(second);
    CHECK(std::abs(per_second[second] - planned[second]) <= 1);
  }
  CHECK(per_second[0] + per_second[1] == 100);
  CHECK(per_second[2] + per_second[3] == 500);

  const json& stages = report["runs"][0]["stages"];
  REQUIRE(stages.size() == 3);
  const std::vector<int> stage_planned{100, 500, 200};
  for (size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(stages[k]["planned"] == stage_planned[k]);
    CHECK(stages[k]["sent"] == stage_planned[k]);
    CHECK(stages[k]["allowed"].get<int>() + stages[k]["denied"].get<int>() +
              stages[k]["errors"].get<int>() ==
          stage_planned[k]);
    CHECK(stages[k]["from_ms"] == 2000.0 * static_cast<double>(k));
  }
  CHECK(stages[1]["target_from_per_s"] == 100.0);
  CHECK(stages[1]["target_to_per_s"] == 400.0);
  CHECK(stages[0]["allowed"] == 10);  // limit 10 a minute: the first stage takes them all
  CHECK(report["runs"][0]["lateness_ms"].contains("p99"));
}

TEST_CASE("load shapes: --arrivals poisson sends the planned count with exponential gaps") {
  const std::string path = records_file("poisson.jsonl");
  const json report =
      json_report({"redis", "--redis", redis_url(), "--json", "--arrivals", "poisson", "--rate",
                   "500/s", "--duration", "3s", "-r", "1", "--records", path, "--seed", "7"},
                  0);
  INFO(checks_of(report));
  CHECK(report["params"]["arrivals"] == "poisson");
  CHECK(check_status(report, "contract") == "pass");
  const std::vector<json> records = read_records(path);
  REQUIRE(records.size() == 1500);
  std::vector<double> gaps;
  int64_t last = -1;
  for (const json& record : records) {  // in seq order, so due_us ascends
    const int64_t due_us = record.at("due_us");
    CHECK(due_us >= last);
    CHECK(due_us < 3'000'000);
    if (last >= 0)
      gaps.push_back(static_cast<double>(due_us - last));
    last = due_us;
  }
  double sum = 0, squares = 0;
  for (double gap : gaps)
    sum += gap;
  const double mean = sum / static_cast<double>(gaps.size());
  for (double gap : gaps)
    squares += (gap - mean) * (gap - mean);
  const double cv = std::sqrt(squares / static_cast<double>(gaps.size())) / mean;
  CHECK(mean == doctest::Approx(2000).epsilon(0.05));  // 500/s: 2 ms apart on average
  CHECK(cv > 0.9);
  CHECK(cv < 1.1);
}

TEST_CASE("load shapes: --stages on the virtual clock, a client-time sliding log passes 3 hours") {
  const std::string path = records_file("virtual.jsonl");
  // Up to 2/s over an hour, an hour at 2/s, down to 0 over an hour: 14 400 requests, 10 an hour.
  const json report = json_report({"redis",
                                   "--redis",
                                   redis_url(),
                                   "--json",
                                   "--virtual-clock",
                                   "--script",
                                   fixture("time/client_sliding_log.lua"),
                                   "-l",
                                   "10",
                                   "-w",
                                   "1h",
                                   "--stages",
                                   "1h:2/s,1h:2/s,1h:0/s",
                                   "-r",
                                   "1",
                                   "--arg",
                                   "{limit}",
                                   "--arg",
                                   "{window_ms}",
                                   "--arg",
                                   "{now_ms}",
                                   "--arg",
                                   "{uuid}",
                                   "--records",
                                   path},
                                  0);
  INFO(checks_of(report));
  CHECK(report["params"]["clock"] == "virtual");
  CHECK(report["params"]["requests"] == 14'400);
  const json& run = report["runs"][0];
  // The last request is due a minute before the plan ends (the ramp down thins out to 0/s).
  CHECK(run["virtual_span_ms"].get<double>() <= 10'800'000);
  CHECK(run["virtual_span_ms"].get<double>() >= 10'700'000);
  CHECK(run["allowed"] == 30);  // 10 in each of the three hours, never more
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK_FALSE(run.contains("lateness_ms"));  // nothing waits for a due time on the virtual clock
  REQUIRE(run["stages"].size() == 3);
  CHECK(run["stages"][0]["planned"] == 3600);
  CHECK(run["stages"][1]["planned"] == 7200);
  CHECK(run["stages"][2]["planned"] == 3600);
  CHECK(run["stages"][1]["sent"] == 7200);
  // Each request was due at the virtual instant it was sent.
  const std::vector<json> records = read_records(path);
  REQUIRE(records.size() == 14'400);
  for (const json& record : records)
    REQUIRE(record.at("due_us") == record.at("send_us"));
}

TEST_CASE("a planned rate one connection cannot carry is a warning before the run") {
  // One connection carries at most 50 000/s (a round trip takes at least 20 us).
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", redis_url(), "--strategy", "lua", "--rate", "100000/s",
                   "--duration", "1ms", "-p", "1", "-r", "1", "-q"});
  CHECK(outcome.err.find("rlcheck: warning: 100000/s planned, but 1 in-flight slot (-p x "
                         "--pipeline) can carry at most 50000/s") != std::string::npos);
  const ProcessOutcome carried =
      run_rlcheck({"redis", "--redis", redis_url(), "--strategy", "lua", "--rate", "1000/s",
                   "--duration", "10ms", "-p", "1", "-r", "1", "-q"});
  CHECK(carried.err.find("warning") == std::string::npos);
}
