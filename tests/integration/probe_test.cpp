// `rlcheck probe` against `rlcheck serve` with each strategy, against a server whose headers
// advertise a limit it does not keep, against one that delays instead of denying, against a
// limiter that counts its own denials, and against Redis limiters directly: the algorithm (and
// a window's anchor) is right, the limit or burst exact, the window or refill within 10 %, and
// the flags it suggests, pasted into a load run against the same limiter, pass.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/fake_http_server.hpp"
#include "support/json_outcome.hpp"
#include "support/raw_http_server.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// serve on database 1 of the shared redis-server, as http_serve_test does: its keys outlive it.
// Identities from X-API-Key unless `extra` says otherwise.
ServeProcess serve(const std::string& strategy, int limit, const std::string& window,
                   const std::vector<std::string>& extra = {"--identity-header", "X-API-Key"}) {
  std::vector<std::string> args{"--redis",    TestRedis::shared().tcp_url() + "/1",
                                "--listen",   "127.0.0.1:0",
                                "--strategy", strategy,
                                "--limit",    std::to_string(limit),
                                "--window",   window};
  args.insert(args.end(), extra.begin(), extra.end());
  return ServeProcess(args);
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;)
    words.push_back(word);
  return words;
}

// A load run with the probe's `flags` pasted in: open model across a few windows, so a window
// or refill measured a little off shows as a limit, hint or utilisation failure.
ProcessOutcome paste(std::vector<std::string> args, const std::string& flags) {
  const std::vector<std::string> pasted = words_of(flags);
  args.insert(args.end(), pasted.begin(), pasted.end());
  args.insert(args.end(), {"--rate", "20/s", "--duration", "3s", "--runs", "1", "-q"});
  return run_rlcheck(args);
}

void check_round_trip(const ServeProcess& server, const std::string& flags) {
  INFO("flags: " << flags);
  REQUIRE_FALSE(flags.empty());
  const ProcessOutcome run = paste({"http", server.url(), "-H", "X-API-Key: pasted-{run}"}, flags);
  INFO("stdout: " << run.out);
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
}

struct Probed {
  ProcessOutcome outcome;
  json report;
};

Probed probe(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"probe"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  Probed probed{run_rlcheck(argv), json()};
  INFO("stdout: " << probed.outcome.out);
  INFO("stderr: " << probed.outcome.err);
  REQUIRE_FALSE(probed.outcome.timed_out);
  probed.report = json::parse(probed.outcome.out, nullptr, false);
  REQUIRE_FALSE(probed.report.is_discarded());
  return probed;
}

Probed probe_http(const ServeProcess& server) {
  return probe({server.url(), "-H", "X-API-Key: probe-{run}", "--max-time", "30s"});
}

void check_within_10_percent(const json& measured, double expected) {
  REQUIRE(measured.is_number());
  CHECK(measured.get<double>() >= expected * 0.9);
  CHECK(measured.get<double>() <= expected * 1.1);
}

void check_window(const Probed& probed, const std::string& algorithm, int limit, double window_ms) {
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(probed.report["schema"] == "rlcheck.probe/v1");
  CHECK(probed.report["algorithm"] == algorithm);
  CHECK(probed.report["limit"] == limit);
  check_within_10_percent(probed.report["window_ms"], window_ms);
  CHECK(probed.report["burst"].is_null());
  const std::string flags = probed.report["flags"];
  CHECK(flags.starts_with("--contract " + algorithm));
  CHECK(flags.find(" --limit " + std::to_string(limit) + " ") != std::string::npos);
}

void check_bucket(const Probed& probed, int burst, double refill_per_s) {
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(probed.report["algorithm"] == "token-bucket");
  CHECK(probed.report["burst"] == burst);
  check_within_10_percent(probed.report["refill_per_s"], refill_per_s);
  CHECK(probed.report["limit"].is_null());
}

}  // namespace

TEST_CASE("probe round trip: serve's sliding and fixed windows; the flags pasted pass") {
  SUBCASE("sliding 1s") {
    ServeProcess server = serve("lua", 5, "1s");
    const Probed probed = probe_http(server);
    check_window(probed, "sliding", 5, 1000);
    CHECK(probed.report["advertised"] == json{{"limit", 5}, {"window_ms", 1000}});
    CHECK(probed.report["advertised_matches"] == true);
    CHECK(probed.report["flags"] == "--contract sliding --limit 5 --window 1s");
    check_round_trip(server, probed.report["flags"]);
  }
  SUBCASE("sliding 2s") {
    ServeProcess server = serve("lua", 3, "2s");
    const Probed probed = probe_http(server);
    check_window(probed, "sliding", 3, 2000);
    CHECK(probed.report["flags"] == "--contract sliding --limit 3 --window 2s");
    check_round_trip(server, probed.report["flags"]);
  }
  SUBCASE("fixed 1s: aligned to the clock") {
    ServeProcess server = serve("fixed-window", 5, "1s");
    const Probed probed = probe_http(server);
    check_window(probed, "fixed", 5, 1000);
    CHECK(probed.report["anchor"] == "clock");
    CHECK(probed.report["advertised_matches"] == true);
    CHECK(probed.report["flags"] == "--contract fixed --limit 5 --window 1s");
    check_round_trip(server, probed.report["flags"]);
  }
  SUBCASE("fixed 2s") {
    ServeProcess server = serve("fixed-window", 3, "2s");
    const Probed probed = probe_http(server);
    check_window(probed, "fixed", 3, 2000);
    CHECK(probed.report["anchor"] == "clock");
    check_round_trip(server, probed.report["flags"]);
  }
}

TEST_CASE("probe round trip: serve's token bucket and GCRA; the flags pasted pass") {
  SUBCASE("token-bucket 1s") {
    ServeProcess server = serve("token-bucket", 5, "1s");
    const Probed probed = probe_http(server);
    check_bucket(probed, 5, 5.0);
    CHECK(probed.report["advertised_matches"] == true);
    CHECK(probed.report["denial_counting"] == false);
    CHECK(probed.report["flags"] == "--contract token-bucket --burst 5 --refill 5/s");
    check_round_trip(server, probed.report["flags"]);
  }
  SUBCASE("token-bucket 2s: 3 then 3 per 2 s") {
    ServeProcess server = serve("token-bucket", 3, "2s");
    const Probed probed = probe_http(server);
    check_bucket(probed, 3, 1.5);
    CHECK(probed.report["flags"] == "--contract token-bucket --burst 3 --refill 3/2s");
    check_round_trip(server, probed.report["flags"]);
  }
  SUBCASE("gcra: the same contract from outside, said so") {
    ServeProcess server =
        serve("gcra", 4, "1s", {"--identity-header", "X-API-Key", "--refill", "8/s"});
    const Probed probed = probe_http(server);
    check_bucket(probed, 4, 8.0);
    CHECK(probed.report["notes"].dump().find("GCRA") != std::string::npos);
    check_round_trip(server, probed.report["flags"]);
  }
  SUBCASE("gcra 2s: 3 then 3 per 2 s") {
    ServeProcess server = serve("gcra", 3, "2s");
    const Probed probed = probe_http(server);
    check_bucket(probed, 3, 1.5);
    CHECK(probed.report["flags"] == "--contract token-bucket --burst 3 --refill 3/2s");
    check_round_trip(server, probed.report["flags"]);
  }
}

TEST_CASE("probe round trip: serve's sliding-window counter; the flags pasted pass") {
  // Like a token bucket once drained (one request every W / L), but its requests come back at
  // the clock's boundaries: the phase test on a second identity tells.
  ServeProcess server = serve("sliding-counter", 5, "1s");
  const Probed probed = probe_http(server);
  check_window(probed, "sliding-counter", 5, 1000);
  CHECK(probed.report["anchor"] == "clock");
  CHECK(probed.report["confidence"] == "high");
  CHECK(probed.report["advertised_matches"] == true);
  CHECK(probed.report["denial_counting"] == false);
  CHECK(probed.report["flags"] == "--contract sliding-counter --limit 5 --window 1s");
  check_round_trip(server, probed.report["flags"]);
}

TEST_CASE("probe round trip: serve's leaky queue; the flags pasted pass") {
  // Replies wait their turn instead of being denied: the rate from how the waits of a burst
  // sent at once grow, the queue from where its denials begin.
  ServeProcess server =
      serve("leaky-queue", 5, "1s",
            {"--identity-header", "X-API-Key", "--refill", "10/s", "--queue", "4"});
  const Probed probed = probe_http(server);
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(probed.report["algorithm"] == "queue");
  check_within_10_percent(probed.report["refill_per_s"], 10.0);
  CHECK(probed.report["queue"] == 4);
  CHECK(probed.report["limit"].is_null());
  CHECK(probed.report["flags"] == "--contract queue --refill 10/s --queue 4");
  check_round_trip(server, probed.report["flags"]);
}

TEST_CASE("probe http: serve advertises its bucket's burst, not its --limit, and probe agrees") {
  // --limit 5 with a bucket of 3: serve advertises q=3 (the burst), which is what it keeps.
  ServeProcess server =
      serve("token-bucket", 5, "1s",
            {"--identity-header", "X-API-Key", "--burst", "3", "--refill", "5/s"});
  const Probed probed = probe_http(server);
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(probed.report["burst"] == 3);
  CHECK(probed.report["advertised"]["limit"] == 3);
  CHECK(probed.report["advertised_matches"] == true);
}

TEST_CASE("probe http: a server that advertises a limit and never denies exits 1") {
  FakeHttpServer server(FakeHttpServer::Mode::reply,
                        {200, {{"X-RateLimit-Limit", "5"}, {"RateLimit-Policy", "5;w=1"}}, "{}"});
  const Probed probed = probe({server.url("/?k={run}"), "--max-time", "30s"});
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 1);
  CHECK(probed.report["algorithm"] == "none");
  CHECK(probed.report["advertised"]["limit"] == 5);
  CHECK(probed.report["advertised_matches"] == false);
  CHECK(probed.report["contradictions"][0] ==
        "the headers advertise a limit of 5 but no request was denied");
}

TEST_CASE("probe http: a fresh identity denied at once is named as such, not sent for {run}") {
  // Always 429: the identity carries {run} already, so the probe says what it saw.
  FakeHttpServer server(FakeHttpServer::Mode::reply, {429, {}, "{}"});
  const Probed probed = probe({server.url(), "-H", "X-API-Key: probe-{run}", "--max-time", "30s"});
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 3);
  CHECK(probed.report["algorithm"] == "unknown");
  CHECK(probed.report["flags"] == "");
  CHECK(probed.report["reason"] ==
        "the first request of a fresh identity ({run} in the header X-API-Key) was denied: the "
        "limit may be 0, or the identity is not what the limiter keys on");
}

TEST_CASE("probe --redis: the built-in strategies directly") {
  const std::string redis = TestRedis::shared().tcp_url();
  SUBCASE("sliding window") {
    check_window(probe({"--redis", redis, "--strategy", "lua", "-l", "4", "-w", "1s"}), "sliding",
                 4, 1000);
  }
  SUBCASE("token bucket") {
    const Probed probed =
        probe({"--redis", redis, "--strategy", "token-bucket", "--burst", "6", "--refill", "10/s"});
    check_bucket(probed, 6, 10.0);
    CHECK(probed.report["advertised"] == json::object());
    CHECK(probed.report["advertised_matches"].is_null());
  }
  SUBCASE("fixed window") {
    check_window(probe({"--redis", redis, "--strategy", "fixed-window", "-l", "3", "-w", "1s"}),
                 "fixed", 3, 1000);
  }
}

TEST_CASE("probe round trip: the sliding-counter strategy over Redis, pasted into rlcheck redis") {
  const std::string redis = TestRedis::shared().tcp_url();
  const Probed probed =
      probe({"--redis", redis, "--strategy", "sliding-counter", "-l", "3", "-w", "1s"});
  check_window(probed, "sliding-counter", 3, 1000);
  CHECK(probed.report["anchor"] == "clock");
  CHECK(probed.report["flags"] == "--contract sliding-counter --limit 3 --window 1s");
  const ProcessOutcome run =
      paste({"redis", "--redis", redis, "--strategy", "sliding-counter"}, probed.report["flags"]);
  INFO("stdout: " << run.out);
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
}

TEST_CASE("probe round trip: a sliding-window counter opened by the first hit, not the clock") {
  // Its first request comes back a whole window after the first admission, and so does the
  // second identity's: pasted with --anchor clock it would fail utilisation.
  const std::string redis = TestRedis::shared().tcp_url();
  const std::vector<std::string> script{"--script", fixture("sliding_counter_first_hit.lua")};
  std::vector<std::string> args{"--redis", redis, "-l", "3", "-w", "1s"};
  args.insert(args.end(), script.begin(), script.end());
  const Probed probed = probe(args);
  check_window(probed, "sliding-counter", 3, 1000);
  CHECK(probed.report["anchor"] == "first-hit");
  CHECK(probed.report["flags"] ==
        "--contract sliding-counter --anchor first-hit --limit 3 --window 1s");
  std::vector<std::string> run{"redis", "--redis", redis};
  run.insert(run.end(), script.begin(), script.end());
  const ProcessOutcome pasted = paste(run, probed.report["flags"]);
  INFO("stdout: " << pasted.out);
  INFO("stderr: " << pasted.err);
  CHECK(pasted.exit_code == 0);
}

TEST_CASE("probe --redis: a limiter that counts its denials keeps out a client that keeps asking") {
  // Elastic expiry: every request, denied or not, counts and restarts the window. A second
  // identity left alone gets back in while the probed one, still asking, never does.
  const Probed probed = probe({"--redis", TestRedis::shared().tcp_url(), "--script",
                               fixture("elastic_expiry.lua"), "-l", "3", "-w", "1s"});
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 0);
  CHECK(probed.report["algorithm"] == "denial-counting");
  CHECK(probed.report["denial_counting"] == true);
  CHECK(probed.report["limit"] == 3);
  CHECK(probed.report["confidence"] == "high");
  // No contract passes while a client keeps sending: nothing to paste.
  CHECK(probed.report["flags"] == "");
  CHECK(probed.report["evidence"].dump().find("left alone got back in") != std::string::npos);
}

TEST_CASE("probe --redis: incr-expire's windows open at the first hit, not on the clock") {
  const Probed probed = probe({"--redis", TestRedis::shared().tcp_url(), "--strategy",
                               "incr-expire", "-l", "3", "-w", "1s"});
  INFO(probed.report.dump(2));
  check_window(probed, "fixed", 3, 1000);
  CHECK(probed.report["anchor"] == "first-hit");
  CHECK(probed.report["flags"] == "--contract fixed --anchor first-hit --limit 3 --window 1s");
}

TEST_CASE("probe round trip: incr-expire, a first-hit round trip") {
  const std::string redis = TestRedis::shared().tcp_url();
  const Probed probed =
      probe({"--redis", redis, "--strategy", "incr-expire", "-l", "3", "-w", "1s"});
  const std::string flags = probed.report["flags"];
  const ProcessOutcome run = paste({"redis", "--redis", redis, "--strategy", "incr-expire"}, flags);
  INFO("flags: " << flags);
  INFO("stdout: " << run.out);
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 0);
}

TEST_CASE("probe --redis: --reply and --script-keys read library scripts as a run does") {
  const std::string redis = TestRedis::shared().tcp_url() + "/6";
  SUBCASE("rate: redis_rate's GCRA, round trip") {
    const std::vector<std::string> script{"--script", fixture("replies/rate_gcra.lua"),
                                          "--reply",  "rate",
                                          "--arg",    "4",
                                          "--arg",    "4",
                                          "--arg",    "1",
                                          "--arg",    "1"};
    std::vector<std::string> args{"--redis", redis};
    args.insert(args.end(), script.begin(), script.end());
    const Probed probed = probe(args);
    check_bucket(probed, 4, 4.0);
    std::vector<std::string> run{"redis", "--redis", redis};
    run.insert(run.end(), script.begin(), script.end());
    const ProcessOutcome pasted = paste(run, probed.report["flags"]);
    INFO("stdout: " << pasted.out);
    CHECK(pasted.exit_code == 0);
  }
  SUBCASE("counter: an INCR + PEXPIRE store opens its window at the first hit") {
    const Probed probed = probe({"--redis", redis, "--script", fixture("replies/counter_store.lua"),
                                 "--reply", "counter", "-l", "3", "-w", "1s"});
    check_window(probed, "fixed", 3, 1000);
    CHECK(probed.report["anchor"] == "first-hit");
  }
  SUBCASE("two keys") {
    check_window(probe({"--redis", redis, "--script", fixture("replies/log_and_counter.lua"),
                        "--script-keys", "2", "-l", "3", "-w", "1s"}),
                 "sliding", 3, 1000);
  }
}

TEST_CASE("probe: a window longer than --max-time is planned from the first hint: exit 3 at once") {
  const Probed probed = probe({"--redis", TestRedis::shared().tcp_url(), "--strategy", "lua", "-l",
                               "3", "-w", "60s", "--max-time", "5s"});
  INFO(probed.report.dump(2));
  CHECK(probed.outcome.exit_code == 3);
  CHECK(probed.report["algorithm"] == "unknown");
  CHECK(probed.report["limit"].is_null());
  CHECK(probed.report["flags"] == "");
  // Three windows of 60 s at least; named, and nothing more sent after the first denial.
  CHECK(probed.report["max_time_needed_ms"].get<int64_t>() >= 180'000);
  const std::string suggested =
      fmt::format("--max-time {}s", probed.report["max_time_needed_ms"].get<int64_t>() / 1000);
  CHECK(probed.report["reason"].get<std::string>().find(suggested) != std::string::npos);
  CHECK(probed.report["requests"] == 8);
}

TEST_CASE("probe: a limiter that delays instead of denying ends within the budget, exit 3") {
  // Every request waits behind the ones before it, and none is denied: a queue.
  std::atomic<int> queued{0};
  RawHttpServer server([&](const std::string&, int) {
    const int ahead = queued++;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(ahead + 1, 8) * 100));
    return RawAnswer{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"};
  });
  RunOptions hang_guard;
  hang_guard.limit = std::chrono::seconds(30);
  const ProcessOutcome outcome =
      run_rlcheck({"probe", server.url("/?k={run}"), "--max-time", "2s", "--json"}, hang_guard);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  REQUIRE_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == 3);
  const json report = json::parse(outcome.out, nullptr, false);
  REQUIRE_FALSE(report.is_discarded());
  CHECK(report["verdict"] == "unknown");
  CHECK(report["reason"].get<std::string>().find("--max-time") != std::string::npos);
  CHECK(report["evidence"].dump().find("none denied") != std::string::npos);
}

TEST_CASE("probe http: a limiter keyed by client address, one source address per trial") {
  ServeProcess server = serve("lua", 3, "1s", {});
  const Probed probed =
      probe({server.url(), "--source-address", "127.0.0.1-127.0.0.4", "--max-time", "30s"});
  check_window(probed, "sliding", 3, 1000);
  // The control (identity 3, the third address) was drained beside identity 1, not denied
  // from its first request as it would be sending from identity 1's address.
  CHECK(probed.report["denial_counting"] == false);
}

TEST_CASE("probe http: without {run}, one identity, waiting for it to be fresh again") {
  ServeProcess server = serve("fixed-window", 3, "1s");
  const Probed probed = probe({server.url(), "-H", "X-API-Key: the-only-one", "--max-time", "30s"});
  check_window(probed, "fixed", 3, 1000);
  CHECK(probed.report["anchor"] == "clock");
  CHECK(probed.report["evidence"].dump().find("one identity") != std::string::npos);
}

TEST_CASE("probe: usage errors name the flag") {
  const ProcessOutcome bad_time =
      run_rlcheck({"probe", "--redis", TestRedis::shared().tcp_url(), "--max-time", "soon"});
  CHECK(bad_time.exit_code == 64);
  CHECK(bad_time.err.find("--max-time") != std::string::npos);
  const ProcessOutcome runs_only = run_rlcheck({"probe", "--reset-cmd", "true"});
  CHECK(runs_only.exit_code == 64);
}
