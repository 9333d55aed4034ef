// `rlcheck http` against a fake server that misbehaves as a real limiter should not: transport
// errors and odd statuses become error kinds (exit 3 above --max-errors), broken Retry-After
// values fail their checks, placeholders reach the wire expanded, and the run rules hold.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/fake_http_server.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"

using namespace rlcheck::testing;
using nlohmann::json;
using Mode = FakeHttpServer::Mode;

namespace {

struct HttpRun {
  ProcessOutcome outcome;
  json report;  // discarded when stdout was not JSON
};

HttpRun run_http(const std::string& url, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"http", url};
  args.insert(args.end(), extra.begin(), extra.end());
  RunOptions options;
  options.limit = std::chrono::seconds(30);
  HttpRun run;
  run.outcome = run_rlcheck(args, options);
  run.report = json::parse(run.outcome.out, nullptr, false);
  return run;
}

// Fails the test unless rlcheck printed a JSON report with `runs` runs.
void require_report(const HttpRun& run, size_t runs = 1) {
  INFO("stdout: " << run.outcome.out);
  INFO("stderr: " << run.outcome.err);
  REQUIRE_FALSE(run.outcome.timed_out);
  REQUIRE_FALSE(run.report.is_discarded());
  REQUIRE(run.report["runs"].size() == runs);
}

// The error kinds of the first run.
json error_kinds(const HttpRun& run) {
  return run.report["runs"][0]["error_kinds"];
}

// A loopback port nothing listens on: bound, then released.
int closed_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), length);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

std::string imf_fixdate(std::time_t when) {
  std::tm parts{};
  gmtime_r(&when, &parts);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &parts);
  return text;
}

FakeHttpServer::Response canned(int status, std::vector<std::pair<std::string, std::string>> h) {
  return FakeHttpServer::Response{status, std::move(h), "{}"};
}

const std::vector<std::string> k_small{"-n", "4",       "-p", "2",     "--runs",
                                       "1",  "--limit", "10", "--json"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

// An endpoint no request could connect to is no test at all, as a Redis that no connection
// reached: exit 3 and one line naming what was tried, before any report.
void require_no_connection(const HttpRun& run, const std::string& url) {
  INFO("stdout: " << run.outcome.out);
  INFO("stderr: " << run.outcome.err);
  REQUIRE_FALSE(run.outcome.timed_out);
  CHECK(run.outcome.exit_code == 3);
  CHECK(run.outcome.err.starts_with("rlcheck: no connection to " + url + " became ready: "));
  CHECK(run.report.is_discarded());
}

TEST_CASE("http errors: a refused connection is no connection, exit 3 naming the URL") {
  const std::string url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/";
  SUBCASE("stopped at the first error") {
    require_no_connection(run_http(url, k_small), url);
  }
  SUBCASE("also within --max-errors") {
    require_no_connection(run_http(url, with(k_small, {"--max-errors", "100"})), url);
  }
}

TEST_CASE("http errors: errors alone are no test, even within --max-errors: exit 3") {
  FakeHttpServer server(Mode::reset);
  const HttpRun run = run_http(server.url(), with(k_small, {"--max-errors", "100"}));
  require_report(run);
  CHECK(run.outcome.exit_code == 3);
  CHECK(run.report["verdict"] == "error");
  CHECK(check_status(run.report, "errors") == "fail");
  CHECK(check_status(run.report, "limit") == "skip");
}

TEST_CASE("http errors: an unresolvable host is no connection, exit 3 naming the URL") {
  const std::string url = "http://rlcheck-no-such-host.invalid/";
  require_no_connection(run_http(url, k_small), url);
}

TEST_CASE("http errors: a connection closed after the request is error kind reset, exit 3") {
  FakeHttpServer server(Mode::reset);
  const HttpRun run = run_http(server.url(), k_small);
  require_report(run);
  CHECK(run.outcome.exit_code == 3);
  CHECK(error_kinds(run).contains("reset"));
  CHECK(error_kinds(run).size() == 1);
  CHECK(server.requests().size() >= 1);
}

TEST_CASE("http errors: a server that never answers is error kind timeout, and ends early") {
  FakeHttpServer server(Mode::stall);
  const auto start = std::chrono::steady_clock::now();
  const HttpRun run = run_http(server.url(), with(k_small, {"--timeout", "300ms"}));
  require_report(run);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK_FALSE(run.outcome.timed_out);
  CHECK(run.outcome.exit_code == 3);
  CHECK(error_kinds(run).contains("timeout"));
  // Errors above --max-errors stop the run: the two in flight time out, no more are sent.
  CHECK(run.report["runs"][0]["stopped_on_errors"] == true);
  CHECK(run.report["runs"][0]["errors"] == 2);
  // 2 requests at a time, 300ms each: far below the 30s the test allows.
  CHECK(took < std::chrono::seconds(10));
}

TEST_CASE("http errors: status 500 is error kind status-500; --max-errors can tolerate it") {
  FakeHttpServer server(Mode::reply, canned(500, {}));
  SUBCASE("above --max-errors: exit 3") {
    const HttpRun run = run_http(server.url(), k_small);
    require_report(run);
    CHECK(run.outcome.exit_code == 3);
    // The run stops at the first error beyond --max-errors 0: the two in flight are counted.
    CHECK(run.report["runs"][0]["stopped_on_errors"] == true);
    CHECK(error_kinds(run)["status-500"] == 2);
    CHECK(run.report["runs"][0]["status_counts"]["500"] == 2);
  }
  SUBCASE("--max-errors equal to the request count: still no test, since nothing was decided") {
    // Tolerated errors beside decided requests pass (unit test of the errors check); errors
    // alone are not a limiter that passed.
    const HttpRun run = run_http(server.url(), with(k_small, {"--max-errors", "4"}));
    require_report(run);
    INFO("stderr: " << run.outcome.err);
    CHECK(run.outcome.exit_code == 3);
    CHECK(error_kinds(run)["status-500"] == 4);
    CHECK(run.report["verdict"] == "error");
    CHECK(run.outcome.err.find("no request was decided") != std::string::npos);
  }
}

TEST_CASE("http errors: a 503 with Retry-After is named with the flag that accepts it") {
  // nginx's limit_req denies with 503 by default: an error to rlcheck until --denied-status
  // says otherwise, and the report says which flag that is.
  FakeHttpServer server(Mode::reply, canned(503, {{"Retry-After", "1"}}));
  SUBCASE("the errors check names --denied-status 503") {
    const HttpRun run = run_http(server.url(), k_small);
    require_report(run);
    CHECK(run.outcome.exit_code == 3);
    CHECK(error_kinds(run)["status-503"] == 2);
    std::string detail;
    for (const auto& check : run.report["checks"]) {
      if (check["id"] == "errors")
        detail = check["detail"].get<std::string>();
    }
    CHECK(detail.find("--denied-status 503") != std::string::npos);
  }
  SUBCASE("so does the hook's reason") {
    RunOptions options;
    options.stdin_mode = StdinMode::empty;
    const ProcessOutcome outcome = run_rlcheck(
        {"http", server.url(), "-n", "4", "-p", "2", "--limit", "10", "--hook"}, options);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.err.find("--denied-status 503") != std::string::npos);
  }
  SUBCASE("pasted, the flag judges the 503s as denials") {
    const HttpRun run = run_http(server.url(), with(k_small, {"--denied-status", "503"}));
    require_report(run);
    CHECK(run.report["runs"][0]["denied"] == 4);
    CHECK(check_status(run.report, "errors") == "pass");
    // Every request denied, on an identity rlcheck cannot prove fresh: no verdict (exit 3).
    CHECK(run.outcome.exit_code == 3);
    CHECK(run.report["checks"][4]["id"] == "utilisation");
    CHECK(run.report["checks"][4]["inconclusive"] == true);
  }
}

TEST_CASE("http errors: a status that does not read as a denial is not offered as one") {
  FakeHttpServer server(Mode::reply, canned(500, {}));
  const HttpRun run = run_http(server.url(), k_small);
  require_report(run);
  CHECK(run.outcome.exit_code == 3);
  CHECK(run.outcome.out.find("--denied-status") == std::string::npos);
}

TEST_CASE("http: --runs > 1 needs {run} (or a reset) for a fresh limiter state each run") {
  FakeHttpServer server(Mode::reply, canned(200, {}));
  SUBCASE("without {run}: usage error naming --runs") {
    const HttpRun run = run_http(server.url(), {"-n", "2", "--runs", "3", "--limit", "1000"});
    CHECK(run.outcome.exit_code == 64);
    const auto lines = lines_of(run.outcome.err);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("--runs") != std::string::npos);
    CHECK(server.requests().empty());
  }
  SUBCASE("with {run} in the URL: accepted, each run its own URL") {
    const HttpRun run = run_http(server.url("/?client=r{run}"), {"-n", "2", "-p", "1", "--runs",
                                                                 "3", "--limit", "1000", "--json"});
    require_report(run, 3);
    INFO("stderr: " << run.outcome.err);
    CHECK(run.outcome.exit_code == 0);
    std::multiset<std::string> targets;
    for (const auto& request : server.requests())
      targets.insert(request.target);
    CHECK(targets.size() == 6);
    for (int r = 1; r <= 3; ++r)
      CHECK(targets.count("/?client=r" + std::to_string(r)) == 2);
  }
}

TEST_CASE("http retry-after: a fractional Retry-After is invalid, and the sample names it") {
  FakeHttpServer server(Mode::reply, canned(429, {{"Retry-After", "1.5"}}));
  const HttpRun run = run_http(server.url(), k_small);
  require_report(run);
  INFO("stdout: " << run.outcome.out);
  CHECK(run.outcome.exit_code == 1);
  CHECK(check_status(run.report, "retry-after-valid") == "fail");
  CHECK(run.report["runs"][0]["retry_after_s"]["invalid"] == 4);
  CHECK(run.report["runs"][0]["retry_after_s"]["invalid_sample"].dump().find("1.5") !=
        std::string::npos);
  for (const auto& check : run.report["checks"]) {
    if (check["id"] == "retry-after-valid")
      CHECK(check["detail"].get<std::string>().find("1.5") != std::string::npos);
  }
}

TEST_CASE("http retry-after: a hint longer than the window fails retry-after-bound") {
  FakeHttpServer server(Mode::reply, canned(429, {{"Retry-After", "120"}}));
  const HttpRun run = run_http(server.url(), with(k_small, {"--window", "60s"}));
  require_report(run);
  CHECK(run.outcome.exit_code == 1);
  CHECK(check_status(run.report, "retry-after-bound") == "fail");
  CHECK(check_status(run.report, "retry-after-valid") == "pass");
  CHECK(run.report["runs"][0]["retry_after_s"]["max"] == 120.0);
}

TEST_CASE("http retry-after: a 429 without Retry-After fails, unless it is not required") {
  FakeHttpServer server(Mode::reply, canned(429, {}));
  SUBCASE("required (default)") {
    const HttpRun run = run_http(server.url(), k_small);
    require_report(run);
    CHECK(run.outcome.exit_code == 1);
    CHECK(check_status(run.report, "retry-after-present") == "fail");
    CHECK(run.report["runs"][0]["retry_after_s"]["missing"] == 4);
  }
  SUBCASE("--no-require-retry-after") {
    const HttpRun run = run_http(server.url(), with(k_small, {"--no-require-retry-after"}));
    require_report(run);
    CHECK(check_status(run.report, "retry-after-present") == "skip");
    CHECK(run.outcome.exit_code == 3);  // nothing admitted: no verdict either way
    CHECK(check_status(run.report, "utilisation") == "fail");
  }
}

TEST_CASE("http retry-after: an IMF-fixdate a few seconds after the Date header is valid") {
  // Long ago on purpose: the hint is measured from the response's Date, not the local clock.
  const std::time_t date = std::time(nullptr) - 3600;
  FakeHttpServer server(Mode::reply, canned(429, {{"Date", imf_fixdate(date)},
                                                  {"Retry-After", imf_fixdate(date + 5)}}));
  const HttpRun run = run_http(server.url(), k_small);
  require_report(run);
  INFO("stdout: " << run.outcome.out);
  CHECK(run.outcome.exit_code == 3);  // nothing admitted: no verdict either way
  CHECK(check_status(run.report, "retry-after-valid") == "pass");
  CHECK(check_status(run.report, "retry-after-present") == "pass");
  const json& retry = run.report["runs"][0]["retry_after_s"];
  CHECK(retry["present"] == 4);
  CHECK(retry["invalid"] == 0);
  CHECK(retry["min"] == 5.0);
  CHECK(retry["max"] == 5.0);
}

TEST_CASE("http placeholders: {seq} {run} {uuid} expanded in body and headers, braces kept") {
  FakeHttpServer server(Mode::reply, canned(200, {}));
  const HttpRun run = run_http(
      server.url(), {"-X", "POST", "-d", R"({"user":"u{seq}","run":{run}})", "-H", "X-Req: {uuid}",
                     "-n", "20", "-p", "4", "--runs", "2", "--limit", "1000", "--json"});
  require_report(run, 2);
  INFO("stderr: " << run.outcome.err);
  CHECK(run.outcome.exit_code == 0);
  const auto requests = server.requests();
  REQUIRE(requests.size() == 40);
  std::set<std::string> bodies, ids;
  int per_run[3] = {0, 0, 0};
  for (const auto& request : requests) {
    CHECK(request.method == "POST");
    bodies.insert(request.body);
    ids.insert(request.header("X-Req"));
    CHECK(request.header("X-Req").find('{') == std::string::npos);
    const json body = json::parse(request.body, nullptr, false);
    REQUIRE_FALSE(body.is_discarded());
    CHECK(body["user"].get<std::string>().starts_with("u"));
    CHECK(body["user"].get<std::string>().find('{') == std::string::npos);
    const int r = body["run"].get<int>();
    REQUIRE((r == 1 || r == 2));
    ++per_run[r];
  }
  CHECK(bodies.size() == 40);
  CHECK(ids.size() == 40);
  CHECK(per_run[1] == 20);
  CHECK(per_run[2] == 20);
}

TEST_CASE("http placeholders: -d @file reads the body from the file") {
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("rlcheck-body-" + std::to_string(getpid()) + ".json");
  {
    std::ofstream out(file);
    out << R"({"from":"file","run":{run}})";
  }
  FakeHttpServer server(Mode::reply, canned(200, {}));
  const HttpRun run = run_http(
      server.url(), with(k_small, {"-X", "POST", "-d", std::string("@").append(file.string())}));
  std::filesystem::remove(file);
  require_report(run);
  CHECK(run.outcome.exit_code == 0);
  const auto requests = server.requests();
  REQUIRE(requests.size() == 4);
  for (const auto& request : requests)
    CHECK(request.body == R"({"from":"file","run":1})");
}

TEST_CASE("http --reset-cmd: a failing command is exit 3 naming it; a passing one is run") {
  FakeHttpServer server(Mode::reply, canned(200, {}));
  SUBCASE("exit 1") {
    const HttpRun run = run_http(server.url(), with(k_small, {"--reset-cmd", "exit 1"}));
    INFO("stderr: " << run.outcome.err);
    CHECK(run.outcome.exit_code == 3);
    CHECK(run.outcome.err.find("--reset-cmd") != std::string::npos);
    CHECK(server.requests().empty());
  }
  SUBCASE("true, two runs") {
    const HttpRun run = run_http(server.url(), {"-n", "3", "-p", "1", "--runs", "2", "--limit",
                                                "1000", "--reset-cmd", "true", "--json"});
    require_report(run, 2);
    CHECK(run.outcome.exit_code == 0);
    CHECK(server.requests().size() == 6);
  }
}

TEST_CASE("http errors: compare keeps the reports measured before an endpoint it cannot test") {
  FakeHttpServer server(Mode::reply, canned(200, {}));
  const std::string closed = "http://127.0.0.1:" + std::to_string(closed_port()) + "/";
  const ProcessOutcome outcome = run_rlcheck({"compare", "--url", server.url(), "--url", closed,
                                              "-n", "4", "-p", "2", "--limit", "10", "--json"});
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 3);
  const json document = json::parse(outcome.out, nullptr, false);
  REQUIRE_FALSE(document.is_discarded());
  REQUIRE(document["reports"].size() == 1);
  CHECK(document["reports"][0]["target"]["url"] == server.url());
  CHECK(document["reports"][0]["verdict"] == "pass");
  CHECK(document["not_run"] == json::array({closed}));
  CHECK(document["not_run_reason"].get<std::string>().find("no connection to " + closed) !=
        std::string::npos);
}
