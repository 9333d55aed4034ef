// rlcheck redis against a real 3-master Redis Cluster (the shared TestCluster, reached through
// one master's URL): every built-in strategy behaves as on a single server, identities spread
// over the masters, a script that builds a key of another slot is explained, a slot moved to
// another master while the load runs costs nothing, --cluster refuses a standalone server, and
// --embedded-cluster starts (and stops) a cluster of its own.

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "redis/cluster_slots.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_cluster.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;
using rlcheck::redis::key_slot;
using rlcheck::redis::NodeAddress;
using Clock = std::chrono::steady_clock;

namespace {

// redis://host:port of the cluster's seed master: rlcheck finds the others itself.
std::string cluster_url() {
  const auto seed = TestCluster::shared().seed_endpoint();
  return fmt::format("redis://{}:{}", seed.host, seed.port);
}

std::string node_name(const NodeAddress& node) {
  return fmt::format("{}:{}", node.host, node.port);
}

json run_json(const std::vector<std::string>& extra, int expected_exit,
              const RunOptions& options = {}) {
  std::vector<std::string> args{"redis", "--redis", cluster_url(), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessOutcome outcome = run_rlcheck(args, options);
  INFO("stderr: " << outcome.err);
  REQUIRE(outcome.exit_code == expected_exit);
  return json::parse(outcome.out);
}

// DEL of `keys` on whichever master serves each now.
void delete_keys(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    auto client = TestCluster::shared().connect_to_master_of(key);
    REQUIRE(client.call({"DEL", key}));
  }
}

bool key_exists(const std::string& key) {
  auto client = TestCluster::shared().connect_to_master_of(key);
  auto reply = client.call({"EXISTS", key});
  return reply && (*reply)->type == REDIS_REPLY_INTEGER && (*reply)->integer == 1;
}

// The first `prefix`N whose identity keys (<key>:0 ... <key>:<identities-1>) are served by
// every master of the cluster now.
std::string key_spread_over_every_master(const std::string& prefix, int identities) {
  const auto map = TestCluster::shared().slot_map();
  for (int i = 0; i < 1000; ++i) {
    const std::string key = fmt::format("{}{}", prefix, i);
    std::set<int> masters;
    for (int id = 0; id < identities; ++id)
      masters.insert(map.master_index(key_slot(fmt::format("{}:{}", key, id))));
    if (masters.size() == map.masters().size())
      return key;
  }
  FAIL("no key spreads over every master");
  return {};
}

// Whether process `pid` (a child not reaped yet) is still running, not exited.
bool still_running(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string pid_text, command, state;
  stat >> pid_text >> command >> state;
  return stat && state != "Z";
}

}  // namespace

TEST_SUITE("redis cluster") {
  TEST_CASE("every atomic strategy admits exactly the limit in every run on the cluster") {
    for (const char* strategy : {"sliding-window", "token-bucket", "gcra", "incr-expire"}) {
      const std::string strategy_name = strategy;
      CAPTURE(strategy_name);
      const json report = run_json({"--strategy", strategy, "--exact"}, 0);
      REQUIRE(report["runs"].size() == 4);
      for (const auto& run : report["runs"]) {
        CHECK(run["allowed"] == 10);
        CHECK(run["errors"] == 0);
      }
      CHECK(check_status(report, "exact") == "pass");
      CHECK(check_status(report, "key-ttl") == "pass");
      CHECK(check_status(report, "retry-after-present") == "pass");
    }
  }

  TEST_CASE("fixed-window admits exactly the limit within each aligned window on the cluster") {
    const json report = run_json({"--strategy", "fixed-window", "--exact"}, 0);
    for (const auto& run : report["runs"]) {
      // A run that straddles a window boundary may legitimately see two windows' worth.
      CHECK(run["peak"]["allowed"] == 10);
      CHECK((run["allowed"] == 10 || run["allowed"] == 20));
      CHECK(run["errors"] == 0);
    }
  }

  TEST_CASE("naive GET-then-INCR goes over the limit on the cluster too") {
    for (int attempt = 0; attempt < 3; ++attempt) {
      const json report = run_json({"--strategy", "naive", "-n", "200", "-p", "50"}, 1);
      CHECK(report["summary"]["runs_over_limit"].get<int>() >= 3);
      CHECK(check_status(report, "limit") == "fail");
      CHECK(report["summary"]["allowed"]["max"].get<int>() > 10);
    }
  }

  TEST_CASE("--identities 16 spreads the requests over every master") {
    const std::string key = key_spread_over_every_master("rlcheck-test:spread:", 16);
    std::vector<std::string> keys;
    for (int id = 0; id < 16; ++id)
      keys.push_back(fmt::format("{}:{}", key, id));
    std::set<std::string> masters;
    for (const std::string& identity_key : keys)
      masters.insert(node_name(TestCluster::shared().master_of(identity_key)));
    REQUIRE(masters.size() == 3);

    const json report = run_json({"--strategy", "lua", "--key", key, "--reset", "--identities",
                                  "16", "-n", "320", "-p", "32", "-r", "1", "--exact"},
                                 0);
    delete_keys(keys);
    REQUIRE(report["runs"].size() == 1);
    const json& run = report["runs"][0];
    CHECK(run["allowed"] == 160);  // 10 for each of the 16 identities
    CHECK(run["errors"] == 0);
    MESSAGE("by_node: " << run.value("by_node", json()).dump());
    REQUIRE(run.contains("by_node"));
    CHECK(run["by_node"].size() == 3);
    int64_t total = 0;
    for (const auto& [node, requests] : run["by_node"].items()) {
      CHECK(masters.contains(node));
      CHECK(requests.get<int64_t>() > 0);
      total += requests.get<int64_t>();
    }
    CHECK(total == 320);
  }

  TEST_CASE("a script that builds a key of another slot is a crossslot error, explained") {
    // The built key (<key>:count) must hash to another slot than the key itself.
    const std::string key = "rlcheck-test:builds-inside";
    REQUIRE(key_slot(key) != key_slot(key + ":count"));
    const std::string script = fixture("builds_key_inside.lua");
    const ProcessOutcome outcome =
        run_rlcheck({"redis", "--redis", cluster_url(), "--script", script, "--key", key, "--reset",
                     "-n", "20", "-p", "5", "-r", "1", "--json"});
    CAPTURE(outcome.err);
    CHECK(outcome.exit_code == 3);
    CHECK(outcome.err.find(script) != std::string::npos);
    CHECK(outcome.err.find("more than one hash slot") != std::string::npos);
    CHECK(outcome.err.find("declare every key in KEYS") != std::string::npos);
    const json report = json::parse(outcome.out);
    CHECK(check_status(report, "errors") == "fail");
    REQUIRE(report["runs"].size() == 1);
    CHECK(report["runs"][0]["allowed"] == 0);
    // Every request errs the same way; the run stops once errors exceed --max-errors (0), so
    // only those already in flight (at most -p) are counted.
    const json& kinds = report["runs"][0]["error_kinds"];
    CHECK(kinds.size() == 1);
    CHECK(kinds.value("crossslot", 0) >= 1);
    CHECK(kinds.value("crossslot", 0) <= 5);
    delete_keys({key, key + ":count"});

    // The same script on a single server counts as it should: only the cluster breaks it.
    const ProcessOutcome standalone =
        run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--script", script, "--key",
                     key, "--reset", "-n", "20", "-p", "5", "-r", "1", "-q"});
    CAPTURE(standalone.err);
    CHECK(standalone.exit_code == 0);
    auto client = TestRedis::shared().connect();
    REQUIRE(client.call({"DEL", key, key + ":count"}));
  }

  TEST_CASE("--cluster against a standalone server is exit 3, saying it is not a cluster") {
    const std::string url = TestRedis::shared().tcp_url();
    const ProcessOutcome outcome = run_rlcheck({"redis", "--redis", url, "--cluster", "-r", "1"});
    CAPTURE(outcome.err);
    CHECK(outcome.exit_code == 3);
    REQUIRE(lines_of(outcome.err).size() == 1);
    CHECK(outcome.err.find("--cluster") != std::string::npos);
    CHECK(outcome.err.find(url + " is not a Redis Cluster") != std::string::npos);

    // The cluster itself passes --cluster.
    CHECK(
        run_rlcheck({"redis", "--redis", cluster_url(), "--cluster", "-r", "1", "-q"}).exit_code ==
        0);
  }

  TEST_CASE("a slot moved to another master mid-run: no error, the limit held") {
    TestCluster& cluster = TestCluster::shared();
    // Without a hash tag: the key alone decides the slot moved.
    const std::string key = "rlcheck-test:resharded";
    const NodeAddress from = cluster.master_of(key);
    NodeAddress to = from;
    const auto map = cluster.slot_map();
    for (const NodeAddress& master : map.masters()) {
      if (master != from)
        to = master;
    }
    REQUIRE(to != from);

    bool moved_while_running = false;
    std::string migrate_error;
    RunOptions options;
    options.on_started = [&](pid_t pid) {
      const auto deadline = Clock::now() + std::chrono::seconds(3);
      while (!key_exists(key) && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (!key_exists(key)) {
        migrate_error = "the run never wrote its key";
        return;
      }
      try {
        cluster.migrate_slot(key_slot(key), to);
      } catch (const std::exception& error) {
        migrate_error = error.what();
      }
      moved_while_running = still_running(pid);
    };
    // 1600 requests over 4 s; the first 200 admitted, the rest denied for the minute.
    const json report =
        run_json({"--strategy", "lua", "--key", key, "--reset", "--rate", "400/s", "--duration",
                  "4s", "--limit", "200", "--window", "1m", "-r", "1", "--timeout", "2s"},
                 0, options);
    REQUIRE_MESSAGE(migrate_error.empty(), migrate_error);
    REQUIRE(moved_while_running);
    CHECK(cluster.master_of(key) == to);
    CHECK(key_exists(key));
    delete_keys({key});

    REQUIRE(report["runs"].size() == 1);
    const json& run = report["runs"][0];
    CHECK(run["errors"] == 0);
    CHECK(run["allowed"] == 200);
    CHECK(run["denied"].get<int>() > 0);
    CHECK(check_status(report, "limit") == "pass");
    CHECK(check_status(report, "contract") == "pass");
    MESSAGE("redirects: " << report["summary"].value("redirects", json()).dump());
    REQUIRE(report["summary"].contains("redirects"));
    const json& redirects = report["summary"]["redirects"];
    CHECK(redirects["moved"].get<int>() + redirects["ask"].get<int>() >= 1);
  }

  TEST_CASE("--embedded-cluster 3 starts a private cluster, tests on it, and stops it") {
    RunOptions options;
    options.limit = std::chrono::seconds(60);
    const ProcessOutcome outcome = run_rlcheck(
        {"redis", "--embedded-cluster", "3", "--strategy", "lua", "-r", "1", "--json"}, options);
    INFO("stderr: " << outcome.err);
    REQUIRE(outcome.exit_code == 0);
    const json report = json::parse(outcome.out);
    CHECK(report["runs"][0]["allowed"] == 10);
    CHECK(report["runs"][0]["errors"] == 0);

    const auto lines = lines_of(outcome.err);
    REQUIRE(lines.size() == 1);
    const std::string& notice = lines[0];
    CHECK(notice.find("started a private 3-master Redis Cluster on 127.0.0.1 ports ") !=
          std::string::npos);
    // Its ports answer no more.
    const size_t ports_at = notice.find("ports ") + 6;
    const std::string ports = notice.substr(ports_at, notice.find(" (", ports_at) - ports_at);
    int stopped = 0;
    for (size_t at = 0; at < ports.size();) {
      const size_t end = std::min(ports.find(", ", at), ports.size());
      const std::string port = ports.substr(at, end - at);
      auto endpoint = rlcheck::redis::parse_endpoint("redis://127.0.0.1:" + port);
      REQUIRE(endpoint.has_value());
      auto client = rlcheck::redis::SyncClient::connect(*endpoint, std::chrono::milliseconds(300));
      CHECK_FALSE(client.has_value());
      ++stopped;
      at = end + 2;
    }
    CHECK(stopped == 3);
  }
}
