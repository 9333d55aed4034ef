// `rlcheck http` against `rlcheck serve` on the shared redis-server: the atomic Lua limiter
// holds the limit over HTTP, the naive one does not, the limit can come from the response
// headers, compare puts two endpoints side by side, and serve survives a Redis outage.

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "process/child_process.hpp"
#include "provision/embedded_server.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::vector<std::string> serve_args(const std::string& redis_url, const std::string& strategy,
                                    int limit, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"--redis",    redis_url, "--listen",          "127.0.0.1:0",
                                "--strategy", strategy,  "--limit",           std::to_string(limit),
                                "--window",   "60s",     "--identity-header", "X-API-Key"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// On the shared redis-server, but in database 1: serve's limiter keys live on (until their
// TTL) after it stops, and other tests expect database 0 to hold no rlcheck:* keys.
std::vector<std::string> shared_serve_args(const std::string& strategy, int limit) {
  return serve_args(TestRedis::shared().tcp_url() + "/1", strategy, limit);
}

json parse_report(const ProcessOutcome& outcome) {
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  REQUIRE_FALSE(outcome.timed_out);
  return json::parse(outcome.out);
}

// Blocking GETs through one libcurl easy handle (its connection is reused).
class Requester {
 public:
  explicit Requester(const std::string& identity = "test")
      : easy_(curl_easy_init(), &curl_easy_cleanup) {
    curl_easy_setopt(easy_.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy_.get(), CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(easy_.get(), CURLOPT_WRITEFUNCTION, &Requester::discard);
    headers_ = curl_slist_append(nullptr, ("X-API-Key: " + identity).c_str());
    curl_easy_setopt(easy_.get(), CURLOPT_HTTPHEADER, headers_);
  }
  ~Requester() { curl_slist_free_all(headers_); }
  Requester(const Requester&) = delete;
  Requester& operator=(const Requester&) = delete;

  // The response status, or 0 with no response.
  long get(const std::string& url) {
    curl_easy_setopt(easy_.get(), CURLOPT_URL, url.c_str());
    if (curl_easy_perform(easy_.get()) != CURLE_OK)
      return 0;
    long status = 0;
    curl_easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &status);
    return status;
  }

 private:
  static size_t discard(char*, size_t size, size_t count, void*) { return size * count; }
  std::unique_ptr<CURL, void (*)(CURL*)> easy_;
  curl_slist* headers_ = nullptr;
};

// Tests about the limiter first make sure serve limits (200 under an identity of its own), so a
// failure there is reported as such rather than as a wrong count later.
void wait_until_limiting(const ServeProcess& serve,
                         std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  Requester probe("readiness-probe");
  const auto deadline = std::chrono::steady_clock::now() + limit;
  long status = probe.get(serve.url());
  while (status == 503 && std::chrono::steady_clock::now() < deadline)
    status = probe.get(serve.url());
  REQUIRE(status == 200);
}

// Runs serve on a private redis-server, stops that Redis, and returns the statuses of 20
// requests sent during the outage; `serve_log` gets serve's stderr up to its exit.
std::vector<long> statuses_during_outage(const std::vector<std::string>& extra,
                                         std::string& serve_log, int& outage_lines) {
  const auto server_path = rlcheck::process::find_on_path("redis-server");
  REQUIRE(server_path.has_value());
  auto redis = rlcheck::provision::EmbeddedServer::start(*server_path);
  REQUIRE(redis.has_value());
  const std::string redis_url = "unix://" + (*redis)->endpoint().socket_path;

  ServeProcess serve(serve_args(redis_url, "lua", 1000, extra));
  wait_until_limiting(serve);
  Requester requester("outage");
  CHECK(requester.get(serve.url()) == 200);
  CHECK(serve.count_lines("redis unavailable") == 0);

  redis->reset();  // SIGTERM, reaped: Redis is gone
  std::vector<long> statuses;
  for (int i = 0; i < 10; ++i)
    statuses.push_back(requester.get(serve.url()));
  serve.drain_stderr("redis unavailable", std::chrono::seconds(5));
  // Reconnection attempts (every 500ms) while Redis stays down must not log again.
  serve.wait_for_count("redis unavailable", 2, std::chrono::milliseconds(1500));
  for (int i = 0; i < 10; ++i)
    statuses.push_back(requester.get(serve.url()));
  const std::optional<int> exit_code = serve.stop();
  CHECK(exit_code == 0);
  serve_log = serve.log();
  outage_lines = serve.count_lines("redis unavailable");
  return statuses;
}

}  // namespace

TEST_CASE("http: serve --strategy lua holds 10 per run over HTTP, Retry-After on every 429") {
  ServeProcess serve(shared_serve_args("lua", 10));
  wait_until_limiting(serve);
  const ProcessOutcome outcome =
      run_rlcheck({"http", serve.url(), "-n", "200", "-p", "50", "--runs", "4", "-H",
                   "X-API-Key: lua-{run}", "--limit", "10", "--json"});
  const json report = parse_report(outcome);
  INFO("serve: " << serve.log());
  CHECK(outcome.exit_code == 0);
  CHECK(report["schema"] == "rlcheck.report/v1");
  CHECK(report["mode"] == "http");
  REQUIRE(report["runs"].size() == 4);
  for (const auto& run : report["runs"]) {
    CHECK(run["allowed"] == 10);
    CHECK(run["denied"] == 190);
    CHECK(run["errors"] == 0);
    CHECK(run["status_counts"]["200"] == 10);
    CHECK(run["status_counts"]["429"] == 190);
    CHECK(run["retry_after_s"]["present"] == run["denied"]);
    CHECK(run["retry_after_s"]["invalid"] == 0);
    // Whole seconds, rounded up: never 0 while the window is still full.
    const double hint_min = run["retry_after_s"]["min"].get<double>();
    CHECK(hint_min >= 1.0);
    CHECK(hint_min == static_cast<double>(static_cast<int64_t>(hint_min)));
    CHECK(run["retry_after_s"]["max"].get<double>() <= 60.0);
    CHECK(run["advertised"]["limit"]["max"] == 10);
  }
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "retry-after-valid") == "pass");
  CHECK(check_status(report, "retry-after-bound") == "pass");
  CHECK(check_status(report, "key-ttl") == "skip");
  CHECK(report["verdict"] == "pass");
}

// Two worker threads, each with its own event loop and curl multi handle (the ThreadSanitizer
// pass runs the "threads" suite).
TEST_CASE("http: serve --strategy lua holds the limit with two worker threads" *
          doctest::test_suite("threads")) {
  ServeProcess serve(shared_serve_args("lua", 10));
  wait_until_limiting(serve);
  const ProcessOutcome outcome =
      run_rlcheck({"http", serve.url(), "-n", "200", "-p", "50", "--threads", "2", "--runs", "2",
                   "-H", "X-API-Key: threads-{run}", "--limit", "10", "--json"});
  const json report = parse_report(outcome);
  INFO("serve: " << serve.log());
  CHECK(outcome.exit_code == 0);
  REQUIRE(report["runs"].size() == 2);
  for (const auto& run : report["runs"]) {
    CHECK(run["allowed"] == 10);
    CHECK(run["denied"] == 190);
    CHECK(run["errors"] == 0);
  }
}

TEST_CASE("http: serve --strategy naive goes over the limit and fails the limit check") {
  ServeProcess serve(shared_serve_args("naive", 10));
  wait_until_limiting(serve);
  const ProcessOutcome outcome =
      run_rlcheck({"http", serve.url(), "-n", "200", "-p", "50", "--runs", "4", "-H",
                   "X-API-Key: naive-{run}", "--limit", "10", "--json"});
  const json report = parse_report(outcome);
  CHECK(outcome.exit_code == 1);
  // The server's pool of Redis connections bounds the race: one run over is enough.
  CHECK(report["summary"]["runs_over_limit"].get<int>() >= 1);
  CHECK(report["summary"]["allowed"]["max"].get<int>() > 10);
  CHECK(check_status(report, "limit") == "fail");
  CHECK(report["verdict"] == "fail");
}

TEST_CASE("http: without --limit the limit is the one serve advertises") {
  ServeProcess serve(shared_serve_args("lua", 7));
  wait_until_limiting(serve);
  SUBCASE("JSON: params.limit and limit_source") {
    const ProcessOutcome outcome =
        run_rlcheck({"http", serve.url(), "-n", "30", "-p", "5", "--runs", "2", "-H",
                     "X-API-Key: adv-json-{run}", "--json"});
    const json report = parse_report(outcome);
    CHECK(outcome.exit_code == 0);
    CHECK(report["params"]["limit"] == 7);
    CHECK(report["params"]["limit_source"] == "advertised");
    for (const auto& run : report["runs"])
      CHECK(run["allowed"] == 7);
  }
  SUBCASE("human report header") {
    const ProcessOutcome outcome =
        run_rlcheck({"http", serve.url(), "-n", "30", "-p", "5", "--runs", "2", "-H",
                     "X-API-Key: adv-human-{run}", "--color", "never"});
    INFO("stdout: " << outcome.out);
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code == 0);
    const auto lines = lines_of(outcome.out);
    REQUIRE_FALSE(lines.empty());
    CHECK(lines.front().find("limit 7 per") != std::string::npos);
    CHECK(lines.front().find("(advertised by the server)") != std::string::npos);
  }
}

TEST_CASE("compare --url: serve lua passes, serve naive fails, side by side") {
  ServeProcess lua(shared_serve_args("lua", 10));
  ServeProcess naive(shared_serve_args("naive", 10));
  wait_until_limiting(lua);
  wait_until_limiting(naive);
  const ProcessOutcome outcome =
      run_rlcheck({"compare", "--url", lua.url(), "--url", naive.url(), "-n", "200", "-p", "50",
                   "--runs", "4", "-H", "X-API-Key: compare-{run}", "--limit", "10", "--json"});
  const json document = parse_report(outcome);
  CHECK(outcome.exit_code == 1);
  CHECK(document["schema"] == "rlcheck.compare/v1");
  REQUIRE(document["reports"].size() == 2);
  CHECK(document["reports"][0]["target"]["url"] == lua.url());
  CHECK(document["reports"][0]["verdict"] == "pass");
  CHECK(document["reports"][1]["target"]["url"] == naive.url());
  CHECK(document["reports"][1]["verdict"] == "fail");
  CHECK(document["exit_code"] == 1);
}

TEST_CASE("serve: a Redis outage answers 503 (fail-closed) and is logged once") {
  std::string log;
  int outage_lines = 0;
  const std::vector<long> statuses = statuses_during_outage({}, log, outage_lines);
  INFO("serve: " << log);
  REQUIRE(statuses.size() == 20);
  for (long status : statuses)
    CHECK(status == 503);
  CHECK(outage_lines == 1);
  CHECK(log.find("fail-closed") != std::string::npos);
}

TEST_CASE("serve --fail-open: a Redis outage lets requests through, logged once") {
  std::string log;
  int outage_lines = 0;
  const std::vector<long> statuses = statuses_during_outage({"--fail-open"}, log, outage_lines);
  INFO("serve: " << log);
  REQUIRE(statuses.size() == 20);
  for (long status : statuses)
    CHECK(status == 200);
  CHECK(outage_lines == 1);
  CHECK(log.find("fail-open") != std::string::npos);
}

TEST_CASE("serve: the listening line tells the real port and SIGTERM stops it cleanly") {
  ServeProcess serve(shared_serve_args("lua", 10));
  CHECK(serve.port() > 0);
  CHECK(serve.url() == "http://127.0.0.1:" + std::to_string(serve.port()) + "/");
  wait_until_limiting(serve);
  CHECK(serve.stop() == 0);
  CHECK(serve.count_lines("stopped") == 1);
}

// "listening on" may be printed before the Redis pool has connected: a request arriving in
// between waits for a connection, it is not answered 503 as in an outage.
TEST_CASE("serve: a request right after the listening line is limited, not 503") {
  for (int attempt = 0; attempt < 5; ++attempt) {
    ServeProcess serve(shared_serve_args("lua", 10));
    Requester requester("first");
    const long status = requester.get(serve.url());
    INFO("attempt " << attempt << ", serve: " << serve.drain_stderr().size() << " lines\n"
                    << serve.log());
    REQUIRE(status == 200);
  }
}
