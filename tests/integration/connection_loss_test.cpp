// What a test does when Redis goes away in the middle of it, or errors pile up: the run stops
// sending once its errors exceed --max-errors, every requested report is still written from
// what was measured, key-ttl is skipped with the reason, the keys rlcheck could not delete are
// listed, and the exit code is 3. The server killed here is a private one (PrivateRedis), never
// the shared TestRedis.

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "process/child_process.hpp"
#include "support/json_outcome.hpp"
#include "support/private_redis.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rlcheck-loss-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The number of entries in the first rlcheck key on `server` (the sliding window's ZSET of
// admissions); 0 while there is none.
long long limiter_entries(const PrivateRedis& server) {
  auto client = server.connect();
  if (!client)
    return 0;
  auto keys = client->call({"KEYS", "rlcheck:*"});
  if (!keys || (*keys)->type != REDIS_REPLY_ARRAY || (*keys)->elements == 0)
    return 0;
  const redisReply* key = (*keys)->element[0];
  auto size = client->call({"ZCARD", std::string_view(key->str, key->len)});
  return size && (*size)->type == REDIS_REPLY_INTEGER ? (*size)->integer : 0;
}

// Waits (bounded) until the run has admitted `entries` requests, then kills the server. Returns
// the instant of the kill, or nullopt when the run never got that far.
std::optional<Clock::time_point> kill_after_entries(PrivateRedis& server, long long entries) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    if (limiter_entries(server) >= entries) {
      const auto now = Clock::now();
      server.kill();
      return now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("Redis killed mid-run: every report is written from what was measured, exit 3") {
  PrivateRedis server;
  TempDir dir;
  const std::string report_path = dir.file("report.json");
  const std::string junit_path = dir.file("report.xml");
  const std::string html_path = dir.file("report.html");
  const std::string records_path = dir.file("records.jsonl");

  std::optional<Clock::time_point> killed_at;
  RunOptions options;
  options.on_started = [&](pid_t) { killed_at = kill_after_entries(server, 5); };
  const ProcessOutcome outcome =
      run_rlcheck({"redis",      "--redis", server.tcp_url(), "--rate",    "200/s",
                   "--duration", "30s",     "--timeout",      "1s",        "-r",
                   "1",          "--json",  "--report",       report_path, "--junit",
                   junit_path,   "--html",  html_path,        "--records", records_path},
                  options);
  const auto exited_at = Clock::now();
  INFO("stderr: " << outcome.err);
  REQUIRE(killed_at.has_value());
  const auto after_kill =
      std::chrono::duration_cast<std::chrono::milliseconds>(exited_at - *killed_at);
  MESSAGE("rlcheck exited " << after_kill.count() << " ms after the kill");
  // The run stops on the first error (--max-errors 0) and nothing after it waits on Redis
  // longer than --timeout (1 s): that bound, and 5 s more for a loaded machine, far below the
  // 30 s the run would go on for.
  CHECK(after_kill <= std::chrono::seconds(1 + 5));

  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("could not test") != std::string::npos);

  const json report = json::parse(outcome.out);
  CHECK(json::parse(read_file(report_path)) == report);
  CHECK(report["verdict"] == "error");
  CHECK(report["exit_code"] == 3);
  REQUIRE(report["runs"].size() == 1);
  const json& run = report["runs"][0];
  // What was decided before the kill is reported as such.
  CHECK(run["allowed"].get<int>() >= 5);
  CHECK(run["allowed"].get<int>() + run["denied"].get<int>() < 1200);  // of 6000 planned
  CHECK(run["errors"].get<int>() >= 1);
  CHECK(run["stopped_on_errors"] == true);
  // A request in flight on the dropped connection is connection-lost; one that waited for the
  // connection to be made again, in vain, is connection.
  std::set<std::string> kinds;
  for (const auto& [kind, count] : run["error_kinds"].items())
    kinds.insert(kind);
  MESSAGE("error kinds: " << run["error_kinds"].dump());
  for (const std::string& kind : kinds)
    CHECK((kind == "connection-lost" || kind == "connection"));
  CHECK(kinds.count("not-sent") == 0);

  CHECK(check_status(report, "errors") == "fail");
  CHECK(check_detail(report, "errors").find("no more requests were sent") != std::string::npos);
  CHECK(check_status(report, "key-ttl") == "skip");
  CHECK(check_detail(report, "key-ttl").rfind("Redis was unreachable after run 1: ", 0) == 0);
  REQUIRE(report["keys_left"].size() >= 1);
  CHECK(report["keys_left"][0].get<std::string>().rfind("rlcheck:", 0) == 0);
  CHECK(report["params"]["topology"] ==
        json{{"kind", "standalone"}, {"masters", 1}, {"tls", false}});
  CHECK(report["params"]["pipeline"] == 1);
  CHECK(report["summary"]["redirects"] == json{{"moved", 0}, {"ask", 0}, {"tryagain", 0}});
  CHECK(report["summary"]["reconnects"] == 0);

  CHECK(valid_junit(junit_path));
  const std::string html = read_file(html_path);
  CHECK(html.find("<html") != std::string::npos);
  CHECK(html.find("</html>") != std::string::npos);
  // One record per request sent, each a JSON line, as many as the report counts.
  std::ifstream records(records_path);
  int lines = 0;
  for (std::string line; std::getline(records, line); ++lines)
    CHECK(json::accept(line));
  CHECK(lines == run["allowed"].get<int>() + run["denied"].get<int>() + run["errors"].get<int>());
}

TEST_CASE("Redis killed during compare: the strategy measured is reported, the rest not run") {
  PrivateRedis server;
  std::optional<Clock::time_point> killed_at;
  RunOptions options;
  options.on_started = [&](pid_t) { killed_at = kill_after_entries(server, 5); };
  const ProcessOutcome outcome =
      run_rlcheck({"compare", "--redis", server.tcp_url(), "--strategies", "lua,naive", "--rate",
                   "200/s", "--duration", "6s", "--timeout", "1s", "-r", "1", "--json"},
                  options);
  INFO("stderr: " << outcome.err);
  REQUIRE(killed_at.has_value());
  CHECK(outcome.exit_code == 3);
  const json compare = json::parse(outcome.out);
  CHECK(compare["verdict"] == "error");
  CHECK(compare["exit_code"] == 3);
  REQUIRE(compare["reports"].size() == 1);
  CHECK(compare["reports"][0]["runs"][0]["stopped_on_errors"] == true);
  CHECK(compare["not_run"] == json::array({"naive"}));
  CHECK(compare["not_run_reason"].get<std::string>().find("cannot connect") != std::string::npos);
  CHECK(outcome.err.find("could not test naive") != std::string::npos);
}

TEST_CASE("a run stops sending once its errors exceed --max-errors, and says so") {
  // Every third call errors; one connection, so exactly the 6th error stops the run.
  const ProcessOutcome outcome = run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(),
                                              "--script", fixture("errors_every_third.lua"), "-n",
                                              "300", "-p", "1", "-r", "1", "--max-errors", "5"});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.out.find("run 1 stopped on errors after 18 of 300 requests") != std::string::npos);
  CHECK(outcome.out.find("6 errored requests > --max-errors 5") != std::string::npos);

  const ProcessOutcome tolerated =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--script",
                   fixture("errors_every_third.lua"), "-n", "30", "-p", "1", "-r", "1",
                   "--max-errors", "10", "--json"});
  const json report = json::parse(tolerated.out);
  CHECK(report["runs"][0]["stopped_on_errors"] == false);
  CHECK(report["runs"][0]["errors"] == 10);
  CHECK(report["keys_left"] == json::array());

  // The script's own call counters are outside its KEYS, so rlcheck does not know to delete
  // them: later tests expect no rlcheck key left.
  auto client = TestRedis::shared().connect();
  for (const std::string& key : TestRedis::shared().keys("rlcheck:*:calls"))
    CHECK(client.call({"DEL", key}).has_value());
}
