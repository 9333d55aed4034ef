// A correct limiter always passes. Every shipped correct strategy, called straight on Redis and
// through `rlcheck serve`, under a closed burst, an open-model load over a few windows, the
// same load with Redis stalled longer than --timeout (the requests that time out run once the
// stall ends, after rlcheck gave up on them: `unknown`), and two identities: every check but
// `errors` passes in every cell, twice over (--runs 2) (incr-expire's documented defect aside: a
// stall can leave its key without a TTL, which key-ttl rightly fails). And the stall does not hide
// a broken limiter: the naive counter still fails the limit through it.
//
// The cells run a few at a time: each sends a few dozen requests a second and mostly waits.
// Cells that stall Redis do it on a server of their own (CLIENT PAUSE stops every client).

#include <doctest/doctest.h>

#include <cmath>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/private_redis.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// At most this many rlcheck processes at once.
constexpr size_t k_parallel = 8;

// An open-model load over 2.5 windows of 1 s, and the same with Redis paused 800 ms from
// 700 ms into each run, four times --timeout.
const std::vector<std::string> k_open{"--rate", "30/s", "--duration", "2500ms", "--runs", "2"};
const std::vector<std::string> k_stall{"--fault", "pause@700ms+800ms", "--timeout",
                                       "200ms",   "--max-errors",      "1000"};

struct Strategy {
  std::string name;
  std::vector<std::string> params;    // the limit, for rlcheck redis and serve alike
  std::vector<std::string> contract;  // what rlcheck http is told of it
  // A documented defect a stall may show, and only it: incr-expire's PEXPIRE is a second
  // command, never sent when its INCR timed out, so the key may be left without a TTL.
  std::string stall_defect = {};
};

std::vector<Strategy> strategies() {
  const std::vector<std::string> window{"--limit", "10", "--window", "1s"};
  const std::vector<std::string> bucket{"--burst", "10", "--refill", "10/s"};
  auto with = [](std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  return {{"sliding-window", window, with({"--contract", "sliding"}, window)},
          {"fixed-window", window, with({"--contract", "fixed"}, window)},
          {"incr-expire", window, with({"--contract", "fixed", "--anchor", "first-hit"}, window),
           "key-ttl"},
          {"token-bucket", bucket, with({"--contract", "token-bucket"}, bucket)},
          {"gcra", bucket, with({"--contract", "gcra"}, bucket)}};
}

struct Cell {
  std::string name;
  std::vector<std::string> args;  // rlcheck's arguments
  bool stalled = false;           // Redis paused longer than --timeout
  std::string tolerated = {};     // the one check that may fail (Strategy::stall_defect)
};

struct Judged {
  Cell cell;
  ProcessOutcome outcome;
};

std::vector<std::string> joined(std::vector<std::string> head,
                                const std::vector<std::vector<std::string>>& parts) {
  for (const auto& part : parts)
    head.insert(head.end(), part.begin(), part.end());
  return head;
}

// The four load shapes against one target: `base` names it (rlcheck redis ... or rlcheck http
// URL ...). `header` (http): the header naming the identity, given a name that tells the
// shapes, runs and identities apart; empty: the keys rlcheck redis makes do.
std::vector<Cell> shapes(const std::string& target, const std::vector<std::string>& base,
                         const std::vector<std::string>& stalled_base, const std::string& header) {
  const auto identity = [&](const std::string& shape, const std::string& placeholders) {
    return header.empty() ? std::vector<std::string>{}
                          : std::vector<std::string>{
                                "-H", header + ": " + target + "-" + shape + "-" + placeholders};
  };
  const std::vector<std::string> json_out{"--json"};
  return {
      {target + " burst",
       joined(base, {identity("burst", "{run}"), {"-n", "40", "-p", "8", "-r", "2"}, json_out})},
      {target + " open", joined(base, {identity("open", "{run}"), k_open, json_out})},
      {target + " open, stalled",
       joined(stalled_base, {identity("stalled", "{run}"), k_open, k_stall, json_out}), true},
      {target + " 2 identities",
       joined(base, {identity("ids", "{run}-{id}"), k_open, {"--identities", "2"}, json_out})},
  };
}

std::vector<Judged> run_all(const std::vector<Cell>& cells) {
  std::vector<Judged> judged;
  for (size_t first = 0; first < cells.size(); first += k_parallel) {
    std::vector<std::future<ProcessOutcome>> running;
    const size_t last = std::min(cells.size(), first + k_parallel);
    for (size_t i = first; i < last; ++i) {
      running.push_back(
          std::async(std::launch::async, [args = cells[i].args] { return run_rlcheck(args); }));
    }
    for (size_t i = first; i < last; ++i)
      judged.push_back({cells[i], running[i - first].get()});
  }
  return judged;
}

void check_passes(const Judged& judged) {
  const ProcessOutcome& outcome = judged.outcome;
  CAPTURE(judged.cell.name);
  INFO("exit " << outcome.exit_code << "\nstdout: " << outcome.out << "\nstderr: " << outcome.err);
  REQUIRE_FALSE(outcome.timed_out);
  REQUIRE_FALSE(outcome.out.empty());
  const json report = json::parse(outcome.out);
  bool defect_shown = false;
  for (const auto& check : report.at("checks")) {
    CAPTURE(check.dump());
    if (check.at("id") == judged.cell.tolerated && check.at("status") == "fail") {
      defect_shown = true;
      continue;
    }
    CHECK(check.at("status") != "fail");
  }
  CHECK(report.at("verdict") == (defect_shown ? "fail" : "pass"));
  CHECK(outcome.exit_code == (defect_shown ? 1 : 0));
  for (const std::string id : {"limit", "contract", "utilisation", "retry-after-accuracy"})
    CHECK(check_status(report, id) != "fail");
  if (judged.cell.stalled) {
    // The stall made requests time out, and those were counted as possibly admitted.
    CHECK(report.at("summary").at("unknown").get<int>() > 0);
  } else {
    CHECK(report.at("summary").at("unknown").get<int>() == 0);
  }
}

std::vector<std::string> serve_args(const std::string& redis_url, const Strategy& strategy) {
  return joined({"--listen", "127.0.0.1:0", "--redis", redis_url, "--strategy", strategy.name,
                 "--identity-header", "X-API-Key"},
                {strategy.params});
}

}  // namespace

TEST_CASE("no false alarm: every correct strategy passes every load, straight and through serve") {
  const std::string shared_url = TestRedis::shared().tcp_url();
  std::vector<std::unique_ptr<PrivateRedis>> stalled_redis;
  std::vector<std::unique_ptr<ServeProcess>> servers;
  std::vector<Cell> cells;
  for (const Strategy& strategy : strategies()) {
    // Straight on Redis.
    stalled_redis.push_back(std::make_unique<PrivateRedis>());
    const std::string stalled_url = stalled_redis.back()->tcp_url();
    const std::vector<std::string> redis{"redis", "--strategy", strategy.name};
    auto straight = shapes(strategy.name, joined(redis, {{"--redis", shared_url}, strategy.params}),
                           joined(redis, {{"--redis", stalled_url}, strategy.params}), "");
    straight[2].tolerated = strategy.stall_defect;  // the stalled cell
    cells.insert(cells.end(), straight.begin(), straight.end());

    // Through serve: one on the shared Redis (database 1: serve's keys outlive it), one on a
    // Redis of its own that the stalled cell pauses. rlcheck http gives up after --timeout;
    // serve waits out the stall, and Redis runs the requests then.
    stalled_redis.push_back(std::make_unique<PrivateRedis>());
    const std::string serve_stalled_url = stalled_redis.back()->tcp_url();
    servers.push_back(std::make_unique<ServeProcess>(serve_args(shared_url + "/1", strategy)));
    const std::string url = servers.back()->url();
    servers.push_back(std::make_unique<ServeProcess>(serve_args(serve_stalled_url, strategy)));
    const std::string stalled_serve = servers.back()->url();
    auto served = shapes(
        "serve-" + strategy.name, joined({"http", url}, {strategy.contract}),
        joined({"http", stalled_serve, "--limiter-redis", serve_stalled_url}, {strategy.contract}),
        "X-API-Key");
    cells.insert(cells.end(), served.begin(), served.end());
  }
  for (const Judged& judged : run_all(cells))
    check_passes(judged);
}

// The stall as users met it: Redis paused 1 s, four times --timeout 200ms. Redis runs the
// EVALSHAs that timed out once the pause ends; they use up the window, and the denials and the
// hints that follow are the correct limiter's, not a lock-out or a late hint.
TEST_CASE("no false alarm: the correct Lua limiter passes a stall longer than --timeout") {
  PrivateRedis redis;
  const std::vector<std::string> args{
      "redis",      "--redis", redis.tcp_url(), "--strategy", "lua",     "--rate",       "50/s",
      "--duration", "3s",      "--window",      "1s",         "--limit", "10",           "-r",
      "1",          "--fault", "pause@1s+1s",   "--timeout",  "200ms",   "--max-errors", "1000"};
  const ProcessOutcome outcome = run_rlcheck(joined(args, {{"--json"}}));
  INFO("exit " << outcome.exit_code << "\nstdout: " << outcome.out << "\nstderr: " << outcome.err);
  REQUIRE_FALSE(outcome.out.empty());
  const json report = json::parse(outcome.out);
  CHECK(report.at("summary").at("unknown").get<int>() > 0);
  CHECK(report.at("runs").at(0).at("unknown") == report.at("summary").at("unknown"));
  for (const std::string id : {"limit", "contract", "utilisation", "retry-after-accuracy"})
    CHECK(check_status(report, id) == "pass");
  CHECK(report.at("verdict") == "pass");
  CHECK(outcome.exit_code == 0);

  // Redis's clock was read around the run, and allowed for only where the readings prove it
  // off rlcheck's rate by more than the assumed 100 ppm (a host whose wall clock is stepped).
  // The report keeps the clock that drifted further from rlcheck's: Redis's TIME or this host's
  // wall clock. Here Redis runs on this host and reads the same clock, so which of the two
  // drifted further is down to microseconds of round-trip noise: either may be reported.
  const json& clock = report.at("runs").at(0).at("limiter_clock");
  INFO("limiter_clock: " << clock.dump());
  CHECK((clock.at("source") == "Redis TIME" || clock.at("source") == "this host's wall clock"));
  CHECK(clock.at("over_ms").get<double>() >= 2500);  // the run's sends lie between the readings
  const double ahead = std::abs(clock.at("ahead_ms").get<double>());
  const double uncertainty = clock.at("uncertainty_ms").get<double>();
  if (ahead - uncertainty > clock.at("over_ms").get<double>() * 1e-4)
    CHECK(clock.at("slack_ms").get<double>() == doctest::Approx(ahead + uncertainty).epsilon(1e-3));
  else
    CHECK(clock.at("slack_ms").get<double>() == 0);

  // The human report says how many were unknown.
  const ProcessOutcome human = run_rlcheck(args);
  INFO("human: " << human.out);
  CHECK(human.exit_code == 0);
  CHECK(human.out.find(" unknown (errored after sending): possibly admitted") != std::string::npos);
}

// serve gives up on Redis first (its --timeout 200ms) and answers 503: those requests reached
// Redis, which runs them once the stall ends. A status that is neither allowed nor denied is
// unknown too.
TEST_CASE("no false alarm: serve's 503 after its own timeout is unknown, not a lock-out") {
  PrivateRedis redis;
  const Strategy lua{"sliding-window", {"--limit", "10", "--window", "1s"}, {}};
  ServeProcess serve(joined(serve_args(redis.tcp_url(), lua), {{"--timeout", "200ms"}}));
  const ProcessOutcome outcome = run_rlcheck(
      joined({"http", serve.url(), "-H", "X-API-Key: serve-503-{run}", "--contract", "sliding",
              "--limit", "10", "--window", "1s", "--limiter-redis", redis.tcp_url()},
             {k_open, {"--fault", "pause@700ms+800ms", "--max-errors", "1000", "--json"}}));
  INFO("exit " << outcome.exit_code << "\nstdout: " << outcome.out << "\nstderr: " << outcome.err);
  REQUIRE_FALSE(outcome.out.empty());
  const json report = json::parse(outcome.out);
  CHECK(report.at("runs").at(0).at("error_kinds").contains("status-503"));
  CHECK(report.at("summary").at("unknown").get<int>() > 0);
  for (const std::string id : {"limit", "contract", "utilisation", "retry-after-accuracy"})
    CHECK(check_status(report, id) == "pass");
  CHECK(report.at("verdict") == "pass");
}

// The naive counter (GET, then INCR) admits every request whose GET ran before another's
// INCR: the requests held by the stall and answered once it ends race so, far past the limit.
TEST_CASE("no false alarm: a stall does not hide a limiter that over-admits") {
  PrivateRedis redis;
  const ProcessOutcome outcome =
      run_rlcheck(joined({"redis", "--redis", redis.tcp_url(), "--strategy", "naive", "--limit",
                          "10", "--window", "1s", "--rate", "100/s", "--duration", "2s", "-r", "2"},
                         {k_stall, {"--json"}}));
  INFO("exit " << outcome.exit_code << "\nstdout: " << outcome.out << "\nstderr: " << outcome.err);
  REQUIRE_FALSE(outcome.out.empty());
  const json report = json::parse(outcome.out);
  CHECK(report.at("summary").at("unknown").get<int>() > 0);
  CHECK(check_status(report, "limit") == "fail");
  CHECK(report.at("verdict") == "fail");
  CHECK(outcome.exit_code == 1);
}
