// Ctrl-C mid-run, mid-wait or mid-suite: exit 130, the verdict says interrupted, and what was
// measured so far is still reported and cleaned up.

#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;

namespace {

// Blocks until the server has seen `command` from some client: MONITOR pushes every command
// as it arrives, so the test waits on the event itself rather than on a guessed delay.
bool wait_for_command(rlcheck::redis::SyncClient& monitor, const std::string& command) {
  for (int replies = 0; replies < 10'000; ++replies) {
    auto reply = monitor.read_reply();
    if (!reply)
      return false;
    const std::string line((*reply)->str ? (*reply)->str : "", (*reply)->len);
    if (line.find('"' + command + '"') != std::string::npos)
      return true;
  }
  return false;
}

// Blocks until some command the server has seen contains `text` (a key name, say).
bool wait_for_text(rlcheck::redis::SyncClient& monitor, const std::string& text) {
  for (int replies = 0; replies < 100'000; ++replies) {
    auto reply = monitor.read_reply();
    if (!reply)
      return false;
    const std::string line((*reply)->str ? (*reply)->str : "", (*reply)->len);
    if (line.find(text) != std::string::npos)
      return true;
  }
  return false;
}

struct ScenarioDir {
  std::filesystem::path path;
  ScenarioDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "rlcheck-interrupt-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~ScenarioDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

// Three scenarios: a quick one, one paced to last 100 s on an explicit key (its first request
// is the signal to interrupt), and one that must never start.
struct InterruptedSuite {
  ScenarioDir dir;
  std::string slow_key;
  std::string never_file;
  explicit InterruptedSuite(const std::string& key) : slow_key(key) {
    dir.write("a-quick.json",
              R"({"name": "quick lua", "strategy": "lua", "requests": 20, "concurrency": 5,
                  "runs": 1, "expect": "pass"})");
    dir.write("b-slow.json", R"({"name": "slow lua", "strategy": "lua", "key": ")" + key +
                                 R"(", "interval": "500ms", "requests": 200, "concurrency": 1,
                  "runs": 1, "expect": "pass"})");
    never_file = dir.write("c-never.json", R"({"name": "never started", "strategy": "naive",
                  "runs": 1, "expect": "fail"})");
  }
};

ProcessOutcome run_suite_until_slow_key(const InterruptedSuite& suite, bool json) {
  auto monitor = TestRedis::shared().connect();
  REQUIRE(monitor.call({"MONITOR"}));
  bool signalled = false;
  RunOptions options;
  options.env["REDIS_URL"] = TestRedis::shared().tcp_url() + "/2";
  options.on_started = [&](pid_t pid) {
    signalled = wait_for_text(monitor, suite.slow_key) && kill(pid, SIGINT) == 0;
  };
  std::vector<std::string> args{"run", suite.dir.path.string(), "--color", "never"};
  if (json)
    args.push_back("--json");
  const ProcessOutcome outcome = run_rlcheck(args, options);
  REQUIRE(signalled);
  return outcome;
}

}  // namespace

TEST_CASE("SIGINT during a run exits 130 with the partial report, and its keys are gone") {
  auto monitor = TestRedis::shared().connect();
  REQUIRE(monitor.call({"MONITOR"}));
  bool signalled = false;
  RunOptions options;
  options.on_started = [&](pid_t pid) {
    signalled = wait_for_command(monitor, "EVALSHA") && kill(pid, SIGINT) == 0;
  };
  // Paced to last 100 s if left alone: only the interrupt can end it within the test's limit.
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--interval", "500ms", "-n",
                   "200", "-p", "1", "-r", "2", "--json"},
                  options);
  REQUIRE(signalled);
  CHECK_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == 130);
  const auto report = nlohmann::json::parse(outcome.out);
  CHECK(report["interrupted"] == true);
  CHECK(report["verdict"] == "interrupted");
  CHECK(report["exit_code"] == 130);
  REQUIRE(report["runs"].size() == 1);
  CHECK(report["runs"][0]["allowed"].get<int>() >= 1);
  CHECK(report["runs"][0]["allowed"].get<int>() < 200);
  CHECK(TestRedis::shared().keys("rlcheck:*").empty());
}

TEST_CASE("SIGINT during the --verify-retry-after wait exits 130, verdict interrupted") {
  RunOptions options;
  // The sliding window tells the last denial to wait up to the 60 s window: only the interrupt
  // can end that wait within the test's limit.
  options.interrupt_on_stderr = "verifying Retry-After: retrying in";
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "-n", "20", "-p", "5", "-r",
                   "1", "--window", "60s", "--verify-retry-after", "--json"},
                  options);
  INFO(outcome.err);
  REQUIRE(outcome.interrupted);
  CHECK_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == 130);
  const auto report = nlohmann::json::parse(outcome.out);
  CHECK(report["verdict"] == "interrupted");
  CHECK(report["exit_code"] == 130);
  CHECK(report["interrupted"] == true);
  REQUIRE(report["runs"].size() == 1);
  CHECK(report["runs"][0]["allowed"] == 10);  // the run itself finished and is reported
  CHECK(check_status(report, "retry-after-honest") == "skip");
  CHECK(TestRedis::shared().keys("rlcheck:*").empty());
}

TEST_CASE("SIGINT during the --verify-retry-after wait: the human verdict says INTERRUPTED") {
  RunOptions options;
  options.interrupt_on_stderr = "verifying Retry-After: retrying in";
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "-n", "20", "-p", "5", "-r",
                   "1", "--window", "60s", "--verify-retry-after", "--color", "never"},
                  options);
  REQUIRE(outcome.interrupted);
  CHECK(outcome.exit_code == 130);
  CHECK(outcome.out.find("INTERRUPTED") != std::string::npos);
  CHECK(outcome.out.find("PASS") == std::string::npos);
}

TEST_CASE("SIGINT during rlcheck run: exit 130, the scenarios not run are named, no false row") {
  const InterruptedSuite suite("rlcheck-int-json-" + std::to_string(getpid()));
  const ProcessOutcome outcome = run_suite_until_slow_key(suite, true);
  INFO(outcome.err);
  CHECK_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == 130);
  const auto json = nlohmann::json::parse(outcome.out);
  CHECK(json["exit_code"] == 130);
  CHECK(json["summary"]["scenarios"] == 3);
  CHECK(json["summary"]["ran"] == 2);
  REQUIRE(json["scenarios"].size() == 2);
  CHECK(json["scenarios"][0]["verdict"] == "pass");
  CHECK(json["scenarios"][0]["ok"] == true);
  CHECK(json["scenarios"][1]["name"] == "slow lua");
  CHECK(json["scenarios"][1]["verdict"] == "interrupted");
  CHECK(json["scenarios"][1]["reports"][0]["verdict"] == "interrupted");
  REQUIRE(json["not_run"].size() == 1);
  CHECK(json["not_run"][0] == suite.never_file);
}

TEST_CASE("SIGINT during rlcheck run: the table counts what ran and shows interrupted") {
  const InterruptedSuite suite("rlcheck-int-text-" + std::to_string(getpid()));
  const ProcessOutcome outcome = run_suite_until_slow_key(suite, false);
  INFO(outcome.out);
  CHECK(outcome.exit_code == 130);
  CHECK(outcome.out.find("2 of 3 scenarios ran, interrupted") != std::string::npos);
  bool slow_row_interrupted = false, never_named = false;
  for (const std::string& line : lines_of(outcome.out)) {
    if (line.find("slow lua") != std::string::npos)
      slow_row_interrupted = line.find("interrupted") != std::string::npos;
    if (line.find(suite.never_file) != std::string::npos)
      never_named = line.find("not run") != std::string::npos;
    CHECK(line.find("✗ pass   pass") == std::string::npos);
  }
  CHECK(slow_row_interrupted);
  CHECK(never_named);
}

TEST_CASE("SIGINT during compare: exit 130, the strategies not run are named") {
  auto monitor = TestRedis::shared().connect();
  REQUIRE(monitor.call({"MONITOR"}));
  bool signalled = false;
  RunOptions options;
  options.on_started = [&](pid_t pid) {
    signalled = wait_for_command(monitor, "EVALSHA") && kill(pid, SIGINT) == 0;
  };
  // The paced first strategy would last 100 s: only the interrupt ends it within the limit.
  const ProcessOutcome outcome = run_rlcheck(
      {"compare", "--redis", TestRedis::shared().tcp_url(), "--strategies", "lua,naive,gcra",
       "--interval", "500ms", "-n", "200", "-p", "1", "-r", "1", "--json"},
      options);
  REQUIRE(signalled);
  CHECK(outcome.exit_code == 130);
  const auto json = nlohmann::json::parse(outcome.out);
  CHECK(json["verdict"] == "interrupted");
  CHECK(json["reports"].size() == 1);
  CHECK(json["not_run"] == nlohmann::json::array({"naive", "gcra"}));
}
