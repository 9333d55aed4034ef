// Queues (`--contract queue --refill R --queue B`) over HTTP: `rlcheck serve --strategy
// leaky-queue` holds each admitted request until its turn, as nginx's limit_req without nodelay
// does. Judged by its own promise it passes under a closed burst and an open load; told a
// shallower queue it fails `delay` (and `limit`: more arrived at once); a token bucket (nodelay:
// its burst leaves at once) judged as a queue fails `contract`. Database 12 keeps serve's keys
// apart from the other integration tests.
//
// No verdict rests on timing luck: the audits place departures where they favour the limiter,
// waits are judged beyond the target's own unloaded latency with a tolerance of 100 ms, and
// the failing cases differ from their promise by a wait of 400 ms or a burst that leaves at once.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck serve` on database 12 with the strategy and its flags, keyed by X-Client.
std::vector<std::string> serve_args(const std::string& flags) {
  std::vector<std::string> args{"--redis",           TestRedis::shared().tcp_url() + "/12",
                                "--listen",          "127.0.0.1:0",
                                "--identity-header", "X-Client"};
  append_words(args, flags);
  return args;
}

// `rlcheck http <url> --json` as identity {run}, then `flags`; the exit code must be `expected`.
json http_run(const ServeProcess& serve, const std::string& flags, int expected) {
  std::vector<std::string> args{"http", serve.url(), "--header", "X-Client: q{run}", "--json"};
  append_words(args, flags);
  return json_report(args, expected);
}

constexpr const char* k_queue_5 = "--strategy leaky-queue --refill 20/s --queue 5";

}  // namespace

TEST_CASE("queue: leaky-queue keeps --contract queue under a closed burst and an open load") {
  ServeProcess serve(serve_args(k_queue_5));
  // 30 at once: one leaves, five wait their turn (50 ms apart), the rest are denied at once.
  const json burst =
      http_run(serve, "--contract queue --refill 20/s --queue 5 -n 30 -p 30 --runs 2", 0);
  CHECK(burst["params"]["contract"] == "queue");
  CHECK(burst["params"]["queue"] == 5);
  CHECK(burst["params"]["refill"] == "20/s");
  for (const json& run : burst["runs"])
    CHECK(run["allowed"] == 6);
  CHECK(check_status(burst, "contract") == "pass");
  CHECK(check_status(burst, "delay") == "pass");
  CHECK(check_status(burst, "limit") == "pass");
  const json& queue = burst["runs"][0]["contract"]["queue"];
  CHECK(queue["promised_wait_ms"] == 250.0);
  // The fifth in line waited about 250 ms: the queue really held it.
  CHECK(queue["longest_wait"]["wait_ms"].get<double>() >= 240.0);

  // 60/s for 2 s: three times the rate, over several drains of the queue, so the denials are
  // judged against the room the queue had.
  const json open = http_run(
      serve, "--contract queue --refill 20/s --queue 5 --rate 60/s --duration 2s -p 40", 0);
  CHECK(check_status(open, "utilisation") == "pass");
  CHECK(check_status(open, "delay") == "pass");
  CHECK(check_status(open, "contract") == "pass");
}

TEST_CASE("queue: judged as a sliding window, a queue is told its flags, which pass pasted back") {
  ServeProcess serve(serve_args(k_queue_5));
  const json sliding = http_run(serve, "--limit 6 --window 1s --rate 60/s --duration 2s -p 40", 1);
  REQUIRE(sliding.contains("contract_fit"));
  const json& fit = sliding["contract_fit"];
  CHECK(fit["contract"] == "queue");
  // The depth is read off the longest wait: a reply held late by a busy machine may read 6.
  CHECK(fit["queue"].get<int>() >= 5);
  CHECK(fit["queue"].get<int>() <= 6);
  CHECK(fit["refill"] == "20/s");
  const json pasted =
      http_run(serve, fit["flags"].get<std::string>() + " --rate 60/s --duration 2s -p 40", 0);
  CHECK(pasted["params"]["contract"] == "queue");
}

TEST_CASE("queue: a queue deeper than claimed fails delay") {
  ServeProcess serve(serve_args("--strategy leaky-queue --refill 20/s --queue 10"));
  const json report = http_run(serve, "--contract queue --refill 20/s --queue 2 -n 30 -p 30", 1);
  CHECK(check_status(report, "delay") == "fail");
  CHECK(check_detail(report, "delay").find("promises at most 100.0ms") != std::string::npos);
  // Not `limit`: an arrival may have been decided as late as its reply, and the replies are
  // spread over the 500 ms the queue held them.
  CHECK(check_status(report, "limit") == "pass");
}

TEST_CASE("queue: a token bucket judged as a queue fails contract, its burst leaving at once") {
  ServeProcess serve(serve_args("--strategy token-bucket --burst 6 --refill 20/s"));
  const json report = http_run(serve, "--contract queue --refill 20/s --queue 5 -n 30 -p 30", 1);
  CHECK(check_status(report, "contract") == "fail");
  CHECK(check_detail(report, "contract").find("departures") != std::string::npos);
  // As arrivals see it, a bucket of 6 is what a queue of 5 admits: only the departures differ.
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "delay") == "pass");
}

TEST_CASE("queue: --find-max finds where the queue's waits break the latency objective") {
  // 100/s with 25 waiting: at 200/s the queue is full within 0.25 s and holds most admitted
  // requests about 250 ms, far over the objective; at 25/s nothing waits.
  ServeProcess serve(serve_args("--strategy leaky-queue --refill 100/s --queue 25"));
  const json report = http_run(serve,
                               "--contract queue --refill 100/s --queue 25 --find-max --slo "
                               "p99<100ms --rate 25/s --duration 500ms -p 60",
                               0);
  CHECK(check_status(report, "slo") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  const json& search = report["find_max"];
  CHECK(search["slo"] == "p99<100ms");
  const json& steps = search["steps"];
  REQUIRE(steps.size() >= 4);
  const std::vector<int> ladder{25, 50, 100, 200};
  for (size_t i = 0; i < ladder.size(); ++i) {
    CHECK(steps[i]["rate_per_s"] == ladder[i]);
    CHECK(steps[i]["phase"] == "ladder");
    CHECK(steps[i]["planned"] == ladder[i] / 2);
  }
  CHECK(steps[0]["passed"] == true);
  CHECK(steps[3]["passed"] == false);
  CHECK(steps[3]["p99_ms"].get<double>() > 100.0);
  const int max_rate = report["summary"]["max_rate"].get<int>();
  CHECK(max_rate == search["max_rate"].get<int>());
  CHECK(max_rate >= 25);
  CHECK(max_rate < 200);
  // Every step is a run, judged as any run is.
  CHECK(report["runs"].size() == steps.size());
  CHECK(report["params"]["runs"] == steps.size());
}

TEST_CASE("queue: usage errors name the flag and what to do instead") {
  const auto usage = [](const std::vector<std::string>& args, const std::string& expected) {
    const ProcessOutcome outcome = run_rlcheck(args);
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code == 64);
    CHECK(outcome.err.find(expected) != std::string::npos);
  };
  usage({"redis", "--strategy", "leaky-queue"}, "rlcheck serve --strategy leaky-queue");
  usage({"compare", "--strategies", "lua,leaky-queue"}, "--strategies: leaky-queue");
  usage({"http", "http://127.0.0.1:9/", "--queue", "5"}, "--queue: only with --contract queue");
  usage({"http", "http://127.0.0.1:9/", "--contract", "queue", "--queue", "50", "--refill", "10/s",
         "--timeout", "2s"},
        "--timeout: 2s does not outlast the queue's longest promised wait");
}

TEST_CASE("--find-max names a saturated connection pool: every connection busy, raise -p") {
  // Admissions leave 50 ms apart (20/s) and nothing is denied: over 2 connections, 80/s cannot
  // be offered, and each connection holds a request for the whole step.
  ServeProcess serve(serve_args("--strategy leaky-queue --refill 20/s --queue 1000"));
  const json report =
      http_run(serve, "--find-max --slo p99<500ms --rate 80/s --duration 1s -p 2 -l 1000", 0);
  const json& search = report["find_max"];
  CHECK(search["client_bound"] == true);
  CHECK(search["pool_bound"] == true);
  REQUIRE(search["steps"].size() == 1);
  CHECK(search["steps"][0]["pool_bound"] == true);
  CHECK(check_status(report, "slo") == "skip");
  CHECK(check_detail(report, "slo").find("all 2 connections busy for the whole step: raise -p") !=
        std::string::npos);
}

TEST_CASE("a run far behind its schedule says so as it happens, naming the busy connection") {
  // One connection to a queue that lets 20/s leave: 100/s planned falls behind by 0.8 s a
  // second, past 1 s and 10 % within about 1.3 s. The warning is the event the test waits for.
  ServeProcess serve(serve_args("--strategy leaky-queue --refill 20/s --queue 1000"));
  RunOptions options;
  options.interrupt_on_stderr = "behind its schedule";
  const ProcessOutcome outcome =
      run_rlcheck({"http", serve.url(), "--header", "X-Client: lag{run}", "-l", "1000", "--rate",
                   "100/s", "--duration", "30s", "-p", "1", "--quiet"},
                  options);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.interrupted);
  const size_t warning = outcome.err.find("rlcheck: warning: run 1 is ");
  REQUIRE(warning != std::string::npos);
  const std::string line = outcome.err.substr(warning, outcome.err.find('\n', warning) - warning);
  CHECK(line.find("behind its schedule (sent ") != std::string::npos);
  CHECK(line.find("every one of the 1 in-flight slot (-p x --pipeline) was busy") !=
        std::string::npos);
  CHECK(line.find("raise -p") != std::string::npos);
}
