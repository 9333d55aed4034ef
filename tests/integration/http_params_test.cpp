// Where `rlcheck http` takes the parameters it judges against when no flag gives them: the
// limit and the window as `rlcheck serve` (or a fake server) advertises them, said so in both
// reports; a window nobody advertised is the default, with one warning on stderr; and an
// endpoint that advertises no limit gets an error naming what it answered.

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/fake_http_server.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;
using Mode = FakeHttpServer::Mode;

namespace {

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("rlcheck-http-params-" + std::to_string(getpid()) + "-" + name))
      .string();
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  json document = json::parse(in, nullptr, false);
  std::filesystem::remove(path);
  return document;
}

int count_containing(const std::string& text, const std::string& needle) {
  int count = 0;
  for (const std::string& line : lines_of(text))
    count += line.find(needle) != std::string::npos ? 1 : 0;
  return count;
}

FakeHttpServer::Response canned(int status, std::vector<std::pair<std::string, std::string>> h) {
  return FakeHttpServer::Response{status, std::move(h), "{}"};
}

ProcessOutcome run_http(const std::string& url, std::vector<std::string> extra) {
  std::vector<std::string> args{"http", url, "-n", "4", "-p", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunOptions options;
  options.limit = std::chrono::seconds(30);
  return run_rlcheck(args, options);
}

}  // namespace

// The commands, as typed: serve advertises RateLimit-Policy "default";q=5;w=10.
TEST_CASE("http params: limit 5 per 10s as serve advertises it, and the hints judged by it") {
  // Keyed on X-API-Key, so t-{run} gives each run an identity of its own (keyed on the client
  // address, the second run would meet the first one's full window and admit nothing).
  ServeProcess serve({"--redis", TestRedis::shared().tcp_url() + "/1", "--listen", "127.0.0.1:0",
                      "--limit", "5", "--window", "10s", "--identity-header", "X-API-Key"});
  const std::string report_path = temp_file("serve.json");
  const ProcessOutcome outcome =
      run_rlcheck({"http", serve.url(), "-n", "100", "-p", "20", "-H", "X-API-Key: t-{run}", "-r",
                   "2", "--report", report_path, "--color", "never"});
  const json report = read_json(report_path);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  INFO("serve: " << serve.log());
  REQUIRE_FALSE(report.is_discarded());
  CHECK(outcome.exit_code == 0);
  const auto lines = lines_of(outcome.out);
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.front().find("limit 5 per 10s (advertised by the server)") != std::string::npos);
  CHECK(report["params"]["limit"] == 5);
  CHECK(report["params"]["window_ms"] == 10'000);
  CHECK(report["params"]["sources"]["limit"] == "advertised");
  CHECK(report["params"]["sources"]["window_ms"] == "advertised");
  CHECK(report["params"]["window_basis"] == "policy");
  CHECK(check_status(report, "retry-after-accuracy") != "fail");
  CHECK(check_status(report, "retry-after-bound") == "pass");
  CHECK(report["verdict"] == "pass");
  // Advertised, so nothing to warn about.
  CHECK(count_containing(outcome.err, "warning") == 0);
}

TEST_CASE("http params: a window read off the largest reset of an allowed response") {
  FakeHttpServer server(Mode::reply,
                        canned(200, {{"RateLimit-Limit", "5"}, {"RateLimit-Reset", "30"}}));
  const ProcessOutcome outcome = run_http(server.url(), {"--json"});
  INFO("stderr: " << outcome.err);
  const json report = json::parse(outcome.out, nullptr, false);
  REQUIRE_FALSE(report.is_discarded());
  CHECK(report["params"]["window_ms"] == 30'000);
  CHECK(report["params"]["sources"]["window_ms"] == "advertised");
  CHECK(report["params"]["window_basis"] == "reset");
  CHECK(count_containing(outcome.err, "warning") == 0);
}

TEST_CASE("http params: a defaulted window is one warning line on stderr, whatever the output") {
  // The limit is advertised, the window is not (no policy, no reset).
  FakeHttpServer server(Mode::reply, canned(200, {{"X-RateLimit-Limit", "5"}}));
  SUBCASE("human report") {
    const ProcessOutcome outcome = run_http(server.url(), {"--color", "never"});
    INFO("stdout: " << outcome.out);
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code == 0);
    CHECK(count_containing(outcome.err, "rlcheck: warning: --window") == 1);
    CHECK(lines_of(outcome.err).size() == 1);
    CHECK(outcome.out.find("warning") == std::string::npos);
    CHECK(lines_of(outcome.out).front().find("limit 5 (advertised) per 1m (default)") !=
          std::string::npos);
  }
  SUBCASE("--json: stdout stays JSON, sources say default") {
    const ProcessOutcome outcome = run_http(server.url(), {"--json"});
    INFO("stderr: " << outcome.err);
    const json report = json::parse(outcome.out, nullptr, false);
    REQUIRE_FALSE(report.is_discarded());
    CHECK(report["params"]["sources"]["limit"] == "advertised");
    CHECK(report["params"]["sources"]["window_ms"] == "default");
    CHECK(report["params"]["window_ms"] == 60'000);
    CHECK(count_containing(outcome.err, "rlcheck: warning: --window") == 1);
  }
  SUBCASE("-q: the verdict line, and still the warning") {
    const ProcessOutcome outcome = run_http(server.url(), {"-q"});
    CHECK(outcome.out == "PASS\n");
    CHECK(count_containing(outcome.err, "rlcheck: warning: --window") == 1);
  }
  SUBCASE("--hook: stdout empty") {
    const ProcessOutcome outcome = run_http(server.url(), {"--hook"});
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.out.empty());
    CHECK(count_containing(outcome.err, "rlcheck: warning: --window") == 1);
  }
  SUBCASE("--window given: no warning, source flag") {
    const ProcessOutcome outcome = run_http(server.url(), {"--window", "10s", "--json"});
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code == 0);
    CHECK(count_containing(outcome.err, "warning") == 0);
    const json report = json::parse(outcome.out, nullptr, false);
    REQUIRE_FALSE(report.is_discarded());
    CHECK(report["params"]["sources"]["window_ms"] == "flag");
    CHECK(report["params"]["window_ms"] == 10'000);
  }
}

TEST_CASE("http params: without --limit, a 404 for every request is could-not-test, named") {
  FakeHttpServer server(Mode::reply, canned(404, {}));
  const ProcessOutcome outcome = run_http(server.url("/nope"), {});
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("answered 404 Not Found to every request") != std::string::npos);
  CHECK(outcome.err.find("advertised no limit") != std::string::npos);
  CHECK(outcome.err.find(server.url("/nope")) != std::string::npos);
  CHECK(lines_of(outcome.err).size() == 1);
}

TEST_CASE(
    "http params: decided requests but no advertised limit: --limit required, statuses named") {
  FakeHttpServer server(Mode::reply, canned(200, {}));
  const ProcessOutcome outcome = run_http(server.url(), {});
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 64);
  CHECK(outcome.err.find("--limit: required") != std::string::npos);
  CHECK(outcome.err.find("200") != std::string::npos);
  CHECK(lines_of(outcome.err).size() == 1);
}

TEST_CASE("http params: a bucket or a queue named whole needs no --limit, and no window warning") {
  FakeHttpServer server(Mode::reply, canned(200, {}));
  for (const std::vector<std::string>& contract :
       {std::vector<std::string>{"--contract", "token-bucket", "--burst", "500", "--refill",
                                 "10/s"},
        std::vector<std::string>{"--contract", "queue", "--refill", "10/s", "--queue", "499"}}) {
    std::vector<std::string> args = contract;
    args.push_back("--json");
    const ProcessOutcome outcome = run_http(server.url(), args);
    INFO("stderr: " << outcome.err);
    // Judged, not refused: the bucket holds; answered at once, the server is no queue.
    CHECK(outcome.exit_code == (contract[1] == "queue" ? 1 : 0));
    CHECK(count_containing(outcome.err, "warning") == 0);
    const json report = json::parse(outcome.out, nullptr, false);
    REQUIRE_FALSE(report.is_discarded());
    CHECK(report["params"]["limit_source"] == "contract");
    CHECK(report["params"]["limit"] == 500);
  }
  // Half named (no --refill: L per window) still needs the limit.
  const ProcessOutcome half =
      run_http(server.url(), {"--contract", "token-bucket", "--burst", "5"});
  CHECK(half.exit_code == 64);
  CHECK(half.err.find("--limit: required") != std::string::npos);
}

TEST_CASE("http params: --records has the HTTP status of every request") {
  FakeHttpServer server(Mode::reply, canned(200, {{"X-RateLimit-Limit", "5"}}));
  const std::string path = temp_file("records.jsonl");
  const ProcessOutcome outcome =
      run_http(server.url(), {"--window", "1m", "--records", path, "-q"});
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const json record = json::parse(line);
    CHECK(record["status"] == 200);
    CHECK(record["outcome"] == "allowed");
    CHECK_FALSE(record.contains("target"));
  }
  std::filesystem::remove(path);
  CHECK(lines == 4);
}

TEST_CASE(
    "http params: serve's token bucket advertises its burst and refill, and passes unflagged") {
  // --burst 5 --refill 5/s: RateLimit-Policy q=5;w=1 (a full bucket of 5 refills in 1 s). Read
  // as a sliding 5 per 1 s the bucket fails (it admits 5 + 5 a second); the policy's bucket
  // reading explains everything it did, and rlcheck judges by it.
  ServeProcess serve({"--redis", TestRedis::shared().tcp_url() + "/1", "--listen", "127.0.0.1:0",
                      "--strategy", "token-bucket", "--burst", "5", "--refill", "5/s",
                      "--identity-header", "X-API-Key"});
  const ProcessOutcome outcome =
      run_rlcheck({"http", serve.url(), "--rate", "20/s", "--duration", "3s", "-H",
                   "X-API-Key: bucket-" + std::to_string(getpid()), "--json"});
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  INFO("serve: " << serve.log());
  REQUIRE(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK(report["params"]["limit"] == 5);
  CHECK(report["params"]["window_ms"] == 1000);
  CHECK(report["params"]["contract"] == "token-bucket");
  CHECK(report["params"]["burst"] == 5);
  CHECK(report["params"]["refill"] == "5/s");
  CHECK(report["verdict"] == "pass");
  // More than one window's worth came through: the refill was exercised, not only the burst.
  CHECK(report["runs"][0]["allowed"].get<int>() > 5);
}
