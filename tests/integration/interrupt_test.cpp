// Ctrl-C mid-run: exit 130, and what was measured so far is still reported and cleaned up.

#include <doctest/doctest.h>

#include <csignal>

#include <nlohmann/json.hpp>

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
  CHECK(report["exit_code"] == 130);
  REQUIRE(report["runs"].size() == 1);
  CHECK(report["runs"][0]["allowed"].get<int>() >= 1);
  CHECK(report["runs"][0]["allowed"].get<int>() < 200);
  CHECK(TestRedis::shared().keys("rlcheck:*").empty());
}
