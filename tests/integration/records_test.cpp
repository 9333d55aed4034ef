// --records against the test redis-server: one line per request of every run, as JSON lines
// or CSV, consistent with the report's counts; compare adds the target; a path that cannot be
// written is exit 3 before anything runs.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("rlcheck-records-" + std::to_string(getpid()) + "-" + name))
      .string();
}

std::vector<std::string> file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  std::filesystem::remove(path);
  return lines;
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');)
    out.push_back(cell);
  if (!line.empty() && line.back() == ',')
    out.emplace_back();
  return out;
}

// 3 runs of 40 requests, 8 at a time, against limit 10 of the Lua sliding window.
std::vector<std::string> redis_args(const std::string& records) {
  return {"redis",      "--redis",   TestRedis::shared().tcp_url(),
          "--strategy", "lua",       "-n",
          "40",         "-p",        "8",
          "-r",         "3",         "--limit",
          "10",         "--records", records,
          "--json"};
}

}  // namespace

TEST_CASE("--records out.jsonl: N x R lines, every field, outcomes as the report counts them") {
  const std::string path = temp_file("out.jsonl");
  const ProcessOutcome outcome = run_rlcheck(redis_args(path));
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  const auto lines = file_lines(path);
  REQUIRE(lines.size() == 120);

  std::map<int, std::map<std::string, int>> outcomes;  // run -> outcome -> count
  std::map<int, std::set<int>> seqs;
  for (const std::string& line : lines) {
    const json record = json::parse(line);
    for (const char* field : {"run", "seq", "identity", "send_us", "reply_us", "outcome"})
      CHECK(record.contains(field));
    CHECK_FALSE(record.contains("status"));  // redis has none
    CHECK_FALSE(record.contains("target"));  // one target only
    CHECK(record["reply_us"].get<int64_t>() >= record["send_us"].get<int64_t>());
    CHECK(record["identity"] == 0);
    // The unpaced closed model has no due instant; every request was sent, by the one worker.
    CHECK_FALSE(record.contains("due_us"));
    CHECK(record["wall_ms"].get<int64_t>() > 1'700'000'000'000);
    CHECK(record["worker"] == 0);
    const std::string kind = record["outcome"];
    CHECK((kind == "allowed" || kind == "denied"));
    if (kind == "denied")
      CHECK(record["retry_ms"].get<int64_t>() > 0);  // the Lua limiter gives hints
    ++outcomes[record["run"].get<int>()][kind];
    seqs[record["run"].get<int>()].insert(record["seq"].get<int>());
  }
  REQUIRE(report["runs"].size() == 3);
  for (const auto& run : report["runs"]) {
    const int number = run["run"];
    CHECK(outcomes[number]["allowed"] == run["allowed"].get<int>());
    CHECK(outcomes[number]["denied"] == run["denied"].get<int>());
    CHECK(seqs[number].size() == 40);
    CHECK(*seqs[number].rbegin() == 39);
  }
}

TEST_CASE("--records out.csv: a header, N x R rows, outcomes as the report counts them") {
  const std::string path = temp_file("out.csv");
  const ProcessOutcome outcome = run_rlcheck(redis_args(path));
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  const auto lines = file_lines(path);
  REQUIRE(lines.size() == 121);
  CHECK(lines[0] ==
        "run,seq,identity,send_us,reply_us,outcome,status,error_kind,retry_ms,due_us,wall_ms,"
        "worker");
  std::map<int, std::map<std::string, int>> outcomes;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto row = cells(lines[i]);
    REQUIRE(row.size() == 12);
    CHECK_FALSE(row[3].empty());   // send_us
    CHECK_FALSE(row[4].empty());   // reply_us
    CHECK(row[6].empty());         // no status for redis
    CHECK(row[7].empty());         // no error
    CHECK(row[9].empty());         // no due instant: unpaced
    CHECK_FALSE(row[10].empty());  // wall_ms
    CHECK(row[11] == "0");         // worker
    ++outcomes[std::stoi(row[0])][row[5]];
  }
  for (const auto& run : report["runs"]) {
    const int number = run["run"];
    CHECK(outcomes[number]["allowed"] == run["allowed"].get<int>());
    CHECK(outcomes[number]["denied"] == run["denied"].get<int>());
  }
}

TEST_CASE("--records in compare: one file, a target column naming each strategy") {
  const std::string path = temp_file("compare.csv");
  const ProcessOutcome outcome =
      run_rlcheck({"compare", "--redis", TestRedis::shared().tcp_url(), "--strategies", "naive,lua",
                   "-n", "20", "-p", "5", "-r", "2", "--records", path, "-q"});
  INFO("stderr: " << outcome.err);
  CHECK_FALSE(outcome.timed_out);
  const auto lines = file_lines(path);
  REQUIRE(lines.size() == 81);
  CHECK(lines[0].starts_with("target,run,seq,"));
  std::map<std::string, int> per_target;
  for (size_t i = 1; i < lines.size(); ++i)
    ++per_target[cells(lines[i])[0]];
  CHECK(per_target == std::map<std::string, int>{{"naive", 40}, {"sliding-window", 40}});
}

TEST_CASE("--records to a path that cannot be written: exit 3 naming the flag, nothing run") {
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--records",
                   "/nonexistent-rlcheck-dir/records.csv", "-n", "5", "-p", "1", "-r", "1"});
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("--records: cannot write /nonexistent-rlcheck-dir/records.csv") !=
        std::string::npos);
  CHECK(outcome.out.empty());
}

TEST_CASE("--records is refused in a scenario file, naming the key, before anything runs") {
  const std::string path = temp_file("scenario.json");
  std::ofstream(path) << R"({"name": "with records", "mode": "redis", "records": "out.csv",
                             "expect": "pass"})";
  const ProcessOutcome outcome = run_rlcheck({"run", path});
  std::filesystem::remove(path);
  CHECK(outcome.exit_code == 64);
  CHECK(outcome.err.find("'records'") != std::string::npos);
  CHECK(lines_of(outcome.err).size() == 1);
}
