// --fault during a run, observed from the server's side: each kind really happens while the
// open-model load goes on, a fault Redis refuses (or a shell command that fails) is exit 3
// naming it, and the faults that need a particular Redis say so. Faults that stall or drop
// connections act on a server of the test's own (PrivateRedis), never on the shared TestRedis.

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/command_line.hpp"
#include "process/child_process.hpp"
#include "provision/embedded_server.hpp"
#include "redis/endpoint.hpp"
#include "runner/run_loop.hpp"
#include "support/private_redis.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_acl.hpp"
#include "support/test_cluster.hpp"
#include "support/test_redis.hpp"
#include "targets/redis/redis_target.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// A field of an INFO section ("total_connections_received"), as a number; -1 when absent.
long long info_field(rlcheck::redis::SyncClient& client, const std::string& section,
                     const std::string& field) {
  auto reply = client.call({"INFO", section});
  REQUIRE(reply);
  REQUIRE((*reply)->type == REDIS_REPLY_STRING);
  const std::string text((*reply)->str, (*reply)->len);
  const std::string prefix = field + ":";
  const size_t at = text.find(prefix);
  if (at == std::string::npos)
    return -1;
  return std::atoll(text.c_str() + at + prefix.size());
}

// How often the server ran a command ("client|pause"), from INFO commandstats; 0 if never.
long long command_calls(rlcheck::redis::SyncClient& client, const std::string& command) {
  auto reply = client.call({"INFO", "commandstats"});
  REQUIRE(reply);
  const std::string text((*reply)->str, (*reply)->len);
  const std::string prefix = "cmdstat_" + command + ":calls=";
  const size_t at = text.find(prefix);
  return at == std::string::npos ? 0 : std::atoll(text.c_str() + at + prefix.size());
}

rlcheck::redis::SyncClient connect_to(const PrivateRedis& server) {
  auto client = server.connect();
  REQUIRE(client);
  return std::move(*client);
}

// rlcheck redis against `url` for 1.5 s at 100/s with `faults`, JSON on stdout.
ProcessOutcome run_with_faults(const std::string& url, const std::vector<std::string>& faults,
                               std::vector<std::string> more = {}) {
  std::vector<std::string> args{"redis",  "--redis",      url,    "--rate", "100/s", "--duration",
                                "1500ms", "-p",           "4",    "-r",     "1",     "-l",
                                "1000",   "--max-errors", "1000", "--json"};
  for (const std::string& fault : faults) {
    args.push_back("--fault");
    args.push_back(fault);
  }
  args.insert(args.end(), more.begin(), more.end());
  return run_rlcheck(args);
}

json parsed(const ProcessOutcome& outcome) {
  INFO("stderr: " << outcome.err);
  REQUIRE_FALSE(outcome.out.empty());
  return json::parse(outcome.out);
}

bool nothing_on_6379() {
  return !rlcheck::redis::SyncClient::connect(
      *rlcheck::redis::parse_endpoint("redis://127.0.0.1:6379"), std::chrono::milliseconds(200));
}

}  // namespace

TEST_SUITE("fault injection") {
  TEST_CASE("every run gets a window per fault, on the run's clock, in the order given") {
    PrivateRedis server;
    const std::string url = server.tcp_url();
    const char* argv[] = {"rlcheck",    "redis",
                          "--redis",    url.c_str(),
                          "--rate",     "100/s",
                          "--duration", "1s",
                          "-p",         "4",
                          "-r",         "2",
                          "-l",         "1000",
                          "--fault",    "kill-clients@30s",
                          "--fault",    "pause@200ms+300ms",
                          "--fault",    "flush-scripts@400ms"};
    const rlcheck::config::Config config =
        rlcheck::cli::parse_command_line(static_cast<int>(std::size(argv)), argv).config;
    rlcheck::targets::RedisSession session = rlcheck::targets::open_redis_session(config);
    rlcheck::targets::RedisTarget target(session, config, config.redis.strategy);
    const auto report = rlcheck::runner::run_test(target, config);
    REQUIRE(report.runs.size() == 2);
    for (const auto& run : report.runs) {
      CAPTURE(run.run);
      REQUIRE(run.faults.size() == 3);
      const auto& late = run.faults[0];
      CHECK(late.spec == "kill-clients@30s");
      CHECK_FALSE(late.applied);
      CHECK(late.error == "the run ended first");
      const auto& pause = run.faults[1];
      CHECK(pause.spec == "pause@200ms+300ms");
      CHECK(pause.applied);
      CHECK(pause.error.empty());
      CHECK(pause.at_ns >= 200'000'000);
      CHECK(pause.until_ns == pause.at_ns + 300'000'000);
      const auto& flush = run.faults[2];
      CHECK(flush.applied);
      CHECK(flush.at_ns >= 400'000'000);
      CHECK(flush.until_ns >= flush.at_ns);
    }
    auto client = connect_to(server);
    CHECK(command_calls(client, "client|pause") == 2);
    CHECK(command_calls(client, "script|flush") == 2);
  }

  TEST_CASE("pause@ stalls the server mid-run; requests time out and the run goes on") {
    PrivateRedis server;
    auto client = connect_to(server);
    const ProcessOutcome outcome =
        run_with_faults(server.tcp_url(), {"pause@300ms+800ms"}, {"--timeout", "200ms"});
    INFO("stderr: " << outcome.err);
    CHECK(command_calls(client, "client|pause") == 1);
    const json report = parsed(outcome);
    CHECK(outcome.exit_code != 3);
    CHECK(report.at("runs").at(0).at("errors").get<int>() > 0);   // timed out while paused
    CHECK(report.at("runs").at(0).at("allowed").get<int>() > 0);  // and decided around it
  }

  TEST_CASE("kill-clients@ drops the load's connections, which come back") {
    PrivateRedis server;
    long long before = 0;
    {
      auto client = connect_to(server);  // closed before the run: CLIENT KILL would drop it
      before = info_field(client, "stats", "total_connections_received");
    }
    const ProcessOutcome outcome = run_with_faults(server.tcp_url(), {"kill-clients@500ms"});
    INFO("stderr: " << outcome.err);
    auto client = connect_to(server);
    CHECK(command_calls(client, "client|kill") == 1);
    const long long connections =
        info_field(client, "stats", "total_connections_received") - before;
    CHECK(connections >= 2 * 4);  // every load connection made twice
    const json report = parsed(outcome);
    CHECK(report.at("summary").at("reconnects").get<int>() >= 1);
    CHECK(outcome.exit_code != 3);
  }

  TEST_CASE("flush-scripts@ empties the script cache mid-run; the limiter loads it again") {
    PrivateRedis server;
    auto client = connect_to(server);
    const ProcessOutcome outcome = run_with_faults(server.tcp_url(), {"flush-scripts@500ms"});
    INFO("stderr: " << outcome.err);
    CHECK(command_calls(client, "script|flush") == 1);
    const json report = parsed(outcome);
    CHECK(report.at("summary").at("script_reloads").get<int>() >= 1);
    CHECK(outcome.exit_code == 0);
  }

  TEST_CASE("shell@ runs the command at its time, and a failing one is exit 3 naming it") {
    const std::filesystem::path marker =
        std::filesystem::temp_directory_path() / ("rlcheck-fault-" + std::to_string(getpid()));
    std::filesystem::remove(marker);
    const ProcessOutcome ran =
        run_with_faults(TestRedis::shared().tcp_url(), {"shell@200ms:touch " + marker.string()});
    INFO("stderr: " << ran.err);
    CHECK(ran.exit_code == 0);
    CHECK(std::filesystem::exists(marker));
    std::filesystem::remove(marker);

    const ProcessOutcome failed =
        run_with_faults(TestRedis::shared().tcp_url(), {"shell@200ms:exit 7"});
    INFO("stderr: " << failed.err);
    CHECK(failed.exit_code == 3);
    CHECK(failed.err.find("--fault shell@200ms:exit 7 could not be applied in run 1: 'exit 7' "
                          "exited with status 7") != std::string::npos);
  }

  TEST_CASE("a fault the server refuses (ACL without CLIENT PAUSE) is exit 3 naming it") {
    std::vector<std::string> rules = sliding_window_user_rules();
    rules.push_back("-client|pause");
    create_acl_user("rlcheck-no-pause", "secret", rules);
    const ProcessOutcome outcome =
        run_with_faults(acl_user_url("rlcheck-no-pause", "secret"), {"pause@200ms+100ms"}, {"-q"});
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code == 3);
    CHECK(outcome.err.find("--fault pause@200ms+100ms could not be applied in run 1") !=
          std::string::npos);
    CHECK(outcome.err.find("NOPERM") != std::string::npos);
  }

  TEST_CASE("a fault due after the run's end is not applied, and not an error") {
    PrivateRedis server;
    const ProcessOutcome outcome = run_with_faults(server.tcp_url(), {"kill-clients@30s"});
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code == 0);
    auto client = connect_to(server);
    CHECK(command_calls(client, "client|kill") == 0);
  }

  TEST_CASE("failover@ promotes the replica of the key's master mid-run") {
    TestCluster& cluster = TestCluster::shared_with_replicas();
    const std::string key = "{fault-failover}:limiter";
    const rlcheck::redis::NodeAddress old_master = cluster.master_of(key);
    const rlcheck::redis::Endpoint seed = cluster.seed_endpoint();
    const ProcessOutcome outcome =
        run_with_faults("redis://127.0.0.1:" + std::to_string(seed.port), {"failover@300ms"},
                        {"--key", key, "--timeout", "2s"});
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code != 3);
    auto old = cluster.connect(old_master);
    auto role = old.call({"ROLE"});
    REQUIRE(role);
    REQUIRE((*role)->type == REDIS_REPLY_ARRAY);
    CHECK(std::string((*role)->element[0]->str, (*role)->element[0]->len) == "slave");
    CHECK_FALSE(cluster.master_of(key) == old_master);
  }

  TEST_CASE("failover@ on a server that is not a cluster with replicas is exit 3 at connect") {
    const ProcessOutcome standalone =
        run_with_faults(TestRedis::shared().tcp_url(), {"failover@1s"}, {"-q"});
    CHECK(standalone.exit_code == 3);
    CHECK(standalone.err.find("--fault failover@1s: needs a Redis Cluster with replicas") !=
          std::string::npos);
    const ProcessOutcome no_replicas = run_with_faults(
        "redis://127.0.0.1:" + std::to_string(TestCluster::shared().seed_endpoint().port),
        {"failover@1s"}, {"-q"});
    CHECK(no_replicas.exit_code == 3);
    CHECK(no_replicas.err.find("has no replica to fail over to") != std::string::npos);
  }

  TEST_CASE("restart@ needs the private redis-server: --redis is exit 64 naming why") {
    const ProcessOutcome outcome =
        run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--fault", "restart@1s"});
    CHECK(outcome.exit_code == 64);
    CHECK(outcome.err.find("--fault: restart@1s restarts only the private redis-server") !=
          std::string::npos);
  }

  TEST_CASE("EmbeddedServer::restart brings the server back empty, on the same socket") {
    auto path = rlcheck::process::find_on_path("redis-server");
    REQUIRE(path);
    auto server = rlcheck::provision::EmbeddedServer::start(*path);
    REQUIRE(server);
    const rlcheck::redis::Endpoint endpoint = (*server)->endpoint();
    std::string run_id;
    {
      auto client = rlcheck::redis::SyncClient::connect(endpoint, std::chrono::seconds(2));
      REQUIRE(client);
      REQUIRE(client->call({"SET", "before-restart", "1"}));
      auto info = client->call({"INFO", "server"});
      REQUIRE(info);
      const std::string text((*info)->str, (*info)->len);
      run_id = text.substr(text.find("run_id:") + 7, 40);
    }
    const auto restarted = (*server)->restart();
    REQUIRE_MESSAGE(restarted, (restarted ? "" : restarted.error()));
    auto client = rlcheck::redis::SyncClient::connect(endpoint, std::chrono::seconds(2));
    REQUIRE(client);
    auto info = client->call({"INFO", "server"});
    REQUIRE(info);
    const std::string text((*info)->str, (*info)->len);
    CHECK(text.substr(text.find("run_id:") + 7, 40) != run_id);
    auto exists = client->call({"EXISTS", "before-restart"});
    REQUIRE(exists);
    CHECK((*exists)->integer == 0);
  }

  TEST_CASE("restart@ restarts the embedded default mid-run; the load reconnects") {
    if (!nothing_on_6379()) {
      MESSAGE("something listens on 127.0.0.1:6379: rlcheck uses it, no private server");
      const ProcessOutcome outcome = run_rlcheck({"redis", "--fault", "restart@1s", "-q"});
      CHECK(outcome.exit_code == 64);
      CHECK(outcome.err.find("restarts only the private redis-server") != std::string::npos);
      return;
    }
    const ProcessOutcome outcome =
        run_rlcheck({"redis", "--rate", "100/s", "--duration", "1500ms", "-p", "4", "-r", "1", "-l",
                     "1000", "--max-errors", "1000", "--json", "--fault", "restart@500ms"});
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code != 3);
    const json report = parsed(outcome);
    CHECK(report.at("summary").at("reconnects").get<int>() >= 1);
  }

  TEST_CASE("rlcheck http --fault acts on --limiter-redis, the Redis behind the endpoint") {
    PrivateRedis server;
    ServeProcess serve({"--listen", "127.0.0.1:0", "--redis", server.tcp_url(), "-l", "1000"});
    const ProcessOutcome outcome =
        run_rlcheck({"http", serve.url() + "?id={run}", "--rate", "100/s", "--duration", "1500ms",
                     "-p", "4", "-l", "1000", "--max-errors", "1000", "-q", "--fault",
                     "kill-clients@500ms", "--limiter-redis", server.tcp_url()});
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code != 3);
    auto client = connect_to(server);
    CHECK(command_calls(client, "client|kill") == 1);

    const ProcessOutcome without =
        run_rlcheck({"http", serve.url(), "--fault", "kill-clients@500ms"});
    CHECK(without.exit_code == 64);
    CHECK(without.err.find("--fault: rlcheck http needs --limiter-redis") != std::string::npos);
  }
}
