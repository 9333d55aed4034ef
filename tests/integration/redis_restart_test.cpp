// Redis restarted in the middle of a test, empty (no persistence): rlcheck loses the requests
// in flight (errors of kind connection-lost), reconnects, and goes on; and since the restarted
// server forgot the window, the limiter admits the limit again within the same minute. That
// over-admission is a finding about the deployment, not noise: the verdict fails. The server
// killed here is the test's own (PrivateRedis), never the shared TestRedis.

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/private_redis.hpp"
#include "support/run_binary.hpp"

using namespace rlcheck::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Whether `key` exists on `server` (false while the server is down).
bool key_exists(const PrivateRedis& server, const std::string& key) {
  auto client = server.connect();
  if (!client)
    return false;
  auto reply = client->call({"EXISTS", key});
  return reply && (*reply)->type == REDIS_REPLY_INTEGER && (*reply)->integer == 1;
}

// The server's `field` from INFO clients (blocked_clients, ...); -1 when it cannot be read.
long long clients_info(const PrivateRedis& server, const std::string& field) {
  auto client = server.connect();
  if (!client)
    return -1;
  auto reply = client->call({"INFO", "clients"});
  if (!reply || (*reply)->type != REDIS_REPLY_STRING)
    return -1;
  const std::string text((*reply)->str, (*reply)->len);
  const size_t at = text.find(field + ":");
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + field.size() + 1));
}

// Holds every script call from now on (CLIENT PAUSE WRITE: reads still answered) and waits
// until one is held, so the crash that follows finds a request in flight, as a crash under
// production load does. False when none was held within the bound.
bool hold_a_request_in_flight(const PrivateRedis& server) {
  auto client = server.connect();
  if (!client)
    return false;
  auto paused = client->call({"CLIENT", "PAUSE", "10000", "WRITE"});
  if (!paused || (*paused)->type != REDIS_REPLY_STATUS)
    return false;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (clients_info(server, "blocked_clients") < 1 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return clients_info(server, "blocked_clients") >= 1;
}

}  // namespace

TEST_CASE("Redis restarted empty mid-run: connections lost and made again, over-admission found") {
  PrivateRedis server;
  const std::string key = "rlcheck-test:restarted";

  bool restarted = false;
  std::string restart_error;
  RunOptions options;
  options.limit = std::chrono::seconds(30);
  options.on_started = [&](pid_t) {
    // Once the limiter has admitted a request, the window holds it; then the crash, with
    // requests in flight.
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (!key_exists(server, key) && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!key_exists(server, key)) {
      restart_error = "the run never wrote its key";
      return;
    }
    if (!hold_a_request_in_flight(server)) {
      restart_error = "no request was held in flight";
      return;
    }
    try {
      server.kill();
      server.start();
      restarted = true;
    } catch (const std::exception& error) {
      restart_error = error.what();
    }
  };
  const ProcessOutcome outcome = run_rlcheck(
      {"redis",  "--redis",      server.tcp_url(), "--strategy", "lua",     "--key", key,
       "--rate", "100/s",        "--duration",     "5s",         "--limit", "20",    "--window",
       "1m",     "--max-errors", "1000",           "--timeout",  "2s",      "-r",    "1",
       "--json"},
      options);
  INFO("stderr: " << outcome.err);
  REQUIRE_MESSAGE(restart_error.empty(), restart_error);
  REQUIRE(restarted);

  // The verdict, not "could not test": the errors are within --max-errors.
  REQUIRE(outcome.exit_code == 1);
  const json report = json::parse(outcome.out);
  CHECK(report["verdict"] == "fail");
  const std::string limit = check_status(report, "limit");
  const std::string contract = check_status(report, "contract");
  CAPTURE(limit);
  CAPTURE(contract);
  CHECK((limit == "fail" || contract == "fail"));

  REQUIRE(report["runs"].size() == 1);
  const json& run = report["runs"][0];
  MESSAGE("allowed " << run["allowed"] << ", errors " << run["error_kinds"].dump());
  // At least one admission before the crash, and the limit again after it.
  CHECK(run["allowed"].get<int>() > 20);
  CHECK(run["error_kinds"].contains("connection-lost"));
  CHECK(run["errors"].get<int>() <= 1000);

  MESSAGE("reconnects: " << report["summary"].value("reconnects", json()).dump());
  REQUIRE(report["summary"].contains("reconnects"));
  CHECK(report["summary"]["reconnects"].get<int>() >= 1);
}
