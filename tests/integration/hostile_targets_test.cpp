// rlcheck against servers that break their protocol on purpose: an HTTP endpoint that answers
// garbage, never ends its headers or body, stalls, closes mid-body, or sends headers too large
// or too many; a fake Redis with invalid RESP, a 512 MB bulk string announced, an endless
// array, deep nesting, replies to nothing, absurd values, in the run and in the set-up. Each
// run ends (the test's limit kills a hang) with errors of a named kind, or a clean exit 3.

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/hostile_server.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

struct HostileRun {
  ProcessOutcome outcome;
  json report;  // discarded when stdout was not JSON
};

HostileRun run_against(std::vector<std::string> args) {
  RunOptions options;
  options.limit = std::chrono::seconds(30);  // a hang is a failure
  HostileRun run;
  run.outcome = run_rlcheck(args, options);
  run.report = json::parse(run.outcome.out, nullptr, false);
  return run;
}

HostileRun run_http(const HostileServer& server) {
  return run_against({"http", server.http_url(), "-n", "2", "-p", "2", "--runs", "1", "--limit",
                      "10", "--timeout", "500ms", "--json"});
}

HostileRun run_redis(const HostileServer& server, const std::string& timeout = "1s") {
  return run_against({"redis", "--redis", server.redis_url(), "--strategy", "incr-expire", "-n",
                      "4", "-p", "2", "--runs", "1", "--limit", "10", "--timeout", timeout,
                      "--json"});
}

// The run ended with a JSON report, exit 3, and only errors of `kind`.
void require_errors_of_kind(const HostileRun& run, const std::string& kind) {
  INFO("stdout: " << run.outcome.out.substr(0, 2000));
  INFO("stderr: " << run.outcome.err.substr(0, 2000));
  REQUIRE_FALSE(run.outcome.timed_out);
  REQUIRE_FALSE(run.report.is_discarded());
  CHECK(run.outcome.exit_code == 3);
  const json& kinds = run.report["runs"][0]["error_kinds"];
  CHECK(kinds.contains(kind));
  CHECK(kinds.size() == 1);
}

// Reads one HTTP request, then writes `head` and calls `then` (more, or a stall).
HostileServer::Handler after_request(
    std::string head, std::function<void(Peer&)> then = [](Peer&) {}) {
  return [head = std::move(head), then = std::move(then)](Peer& peer) {
    if (!peer.read_until("\r\n\r\n") || !peer.write(head))
      return;
    then(peer);
  };
}

}  // namespace

TEST_CASE("hostile http: a reply that is not HTTP is error kind protocol") {
  HostileServer server(after_request("SSH-2.0-OpenSSH_9.2\r\n\x01\x02\xfe garbage\r\n\r\n"));
  require_errors_of_kind(run_http(server), "protocol");
}

TEST_CASE("hostile http: headers that never end are a timeout") {
  HostileServer server(after_request("HTTP/1.1 200 OK\r\n", [](Peer& peer) {
    while (peer.write("X-More: 1\r\n") && !peer.stopping())
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the server's pace
  }));
  require_errors_of_kind(run_http(server), "timeout");
}

TEST_CASE("hostile http: a chunked body that never ends is a timeout") {
  HostileServer server(
      after_request("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", [](Peer& peer) {
        const std::string chunk = "4000\r\n" + std::string(0x4000, 'x') + "\r\n";
        while (peer.write(chunk)) {
        }
      }));
  require_errors_of_kind(run_http(server), "timeout");
}

TEST_CASE("hostile http: a Content-Length never reached is a timeout") {
  HostileServer server(after_request("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nabc",
                                     [](Peer& peer) { peer.stall(); }));
  require_errors_of_kind(run_http(server), "timeout");
}

TEST_CASE("hostile http: a server that accepts and never reads is a timeout") {
  HostileServer server([](Peer& peer) { peer.stall(); });
  require_errors_of_kind(run_http(server), "timeout");
}

TEST_CASE("hostile http: a connection closed mid-body is error kind reset") {
  HostileServer server(after_request("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"));
  require_errors_of_kind(run_http(server), "reset");
}

TEST_CASE("hostile http: a 200 KB header is error kind too-large") {
  HostileServer server(after_request("HTTP/1.1 200 OK\r\nX-Big: " + std::string(200 * 1024, 'b') +
                                     "\r\nContent-Length: 0\r\n\r\n"));
  require_errors_of_kind(run_http(server), "too-large");
}

TEST_CASE("hostile http: 15 000 headers (over 300 KB) are error kind too-large") {
  std::string head = "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 15000; ++i)
    head += "X-Header-" + std::to_string(i) + ": value\r\n";
  HostileServer server(after_request(head + "Content-Length: 0\r\n\r\n"));
  require_errors_of_kind(run_http(server), "too-large");
}

TEST_CASE("hostile http: absurd Retry-After values are judged invalid or taken, never a crash") {
  struct Case {
    std::string value;
    std::string failed_check;  // empty: the value is a valid hint (a date past: no wait)
  };
  const std::vector<Case> cases{
      {"99999999999999999999", "retry-after-valid"},
      {"-5", "retry-after-valid"},
      {"1.5", "retry-after-valid"},
      {"\x7f\x01 garbage", "retry-after-valid"},
      {"Fri, 31 Dec 9999 23:59:59 GMT", "retry-after-bound"},
      {"Mon, 01 Jan 1900 00:00:00 GMT", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.value);
    HostileServer server([value = c.value](Peer& peer) {
      while (peer.read_until("\r\n\r\n")) {
        peer.buffer().clear();
        if (!peer.write("HTTP/1.1 429 Too Many Requests\r\nRetry-After: " + value +
                        "\r\nContent-Length: 0\r\n\r\n"))
          return;
      }
    });
    const HostileRun run = run_http(server);
    INFO("stderr: " << run.outcome.err);
    REQUIRE_FALSE(run.outcome.timed_out);
    REQUIRE_FALSE(run.report.is_discarded());
    CHECK(run.report["runs"][0]["error_kinds"].empty());
    if (c.failed_check.empty()) {
      // Taken as a valid hint; a server that denies every request admits nothing, which is no
      // pass either: no verdict (exit 3).
      CHECK(check_status(run.report, "retry-after-valid") == "pass");
      CHECK(run.outcome.exit_code == 3);
      CHECK(check_status(run.report, "utilisation") == "fail");
    } else {
      CHECK(run.outcome.exit_code == 1);
      CHECK(check_status(run.report, c.failed_check) == "fail");
    }
  }
}

TEST_CASE("hostile redis: replies in the run that break RESP or rlcheck's caps") {
  struct Case {
    RedisHostility hostility;
    std::string kind;
  };
  const std::vector<Case> cases{
      {RedisHostility::garbage, "protocol"},
      {RedisHostility::huge_bulk_trickle, "too-large"},
      {RedisHostility::huge_bulk_stall, "timeout"},
      {RedisHostility::wide_array, "too-large"},
      {RedisHostility::deep_nesting, "protocol"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.kind);
    CAPTURE(static_cast<int>(c.hostility));
    HostileServer server(fake_redis(c.hostility, "INCR"));
    // A cap must trip before the timeout however slow this machine reads: a long timeout there.
    require_errors_of_kind(run_redis(server, c.kind == "too-large" ? "30s" : "1s"), c.kind);
  }
}

TEST_CASE("hostile redis: replies to nothing are a protocol error, or put replies out of step") {
  // RESP2 matches replies to commands by order: an extra reply is seen as one only when no
  // command waits (protocol); else the next command takes it, and its shape is wrong.
  HostileServer server(fake_redis(RedisHostility::unsolicited, "INCR"));
  const HostileRun run = run_redis(server);
  INFO("stderr: " << run.outcome.err);
  REQUIRE_FALSE(run.outcome.timed_out);
  REQUIRE_FALSE(run.report.is_discarded());
  CHECK(run.outcome.exit_code == 3);
  const json& kinds = run.report["runs"][0]["error_kinds"];
  CHECK_FALSE(kinds.empty());
  for (const auto& [kind, count] : kinds.items()) {
    CAPTURE(kind);
    CHECK((kind == "protocol" || kind == "bad-reply"));
  }
}

TEST_CASE("hostile redis: absurd values of the right type are judged, not a crash") {
  SUBCASE("a count of -2^63") {
    HostileServer server(fake_redis(RedisHostility::absurd_value, "INCR"));
    const HostileRun run = run_redis(server);
    INFO("stderr: " << run.outcome.err);
    REQUIRE_FALSE(run.outcome.timed_out);
    REQUIRE_FALSE(run.report.is_discarded());
    CHECK(run.outcome.exit_code == 0);  // every request admitted, within the limit
  }
  SUBCASE("a denial with a retry of 2^63-1 ms") {
    HostileServer server(fake_redis(RedisHostility::absurd_value, "EVALSHA"));
    const HostileRun run =
        run_against({"redis", "--redis", server.redis_url(), "--strategy", "gcra", "-n", "4", "-p",
                     "2", "--runs", "1", "--limit", "10", "--timeout", "1s", "--json"});
    INFO("stderr: " << run.outcome.err);
    REQUIRE_FALSE(run.outcome.timed_out);
    REQUIRE_FALSE(run.report.is_discarded());
    CHECK(run.outcome.exit_code == 1);
    CHECK(check_status(run.report, "retry-after-bound") == "fail");
  }
}

TEST_CASE("hostile redis: a hostile answer during the set-up is a clean exit 3") {
  for (const RedisHostility hostility :
       {RedisHostility::garbage, RedisHostility::huge_bulk_trickle, RedisHostility::huge_bulk_stall,
        RedisHostility::wide_array, RedisHostility::deep_nesting, RedisHostility::unsolicited}) {
    for (const std::string trigger : {"PING", "SCRIPT"}) {
      // After the last set-up command, extra replies only cost a connection made again.
      if (hostility == RedisHostility::unsolicited && trigger == "SCRIPT")
        continue;
      CAPTURE(static_cast<int>(hostility));
      CAPTURE(trigger);
      HostileServer server(fake_redis(hostility, trigger));
      const HostileRun run = run_against({"redis", "--redis", server.redis_url(), "--strategy",
                                          trigger == "SCRIPT" ? "gcra" : "incr-expire", "-n", "4",
                                          "-p", "2", "--runs", "1", "--timeout", "1s"});
      INFO("stdout: " << run.outcome.out.substr(0, 2000));
      INFO("stderr: " << run.outcome.err.substr(0, 2000));
      REQUIRE_FALSE(run.outcome.timed_out);
      CHECK(run.outcome.exit_code == 3);
      CHECK(run.outcome.err.starts_with("rlcheck: "));
      // Replies out of step are found by their shape, in the run that follows (bad-reply).
      if (hostility != RedisHostility::unsolicited)
        CHECK(run.outcome.out.empty());
    }
  }
}
