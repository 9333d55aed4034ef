// The Python libraries teams run, as Debian ships them: Flask-Limiter 3.3 in a small Flask
// application (tests/fixtures/flask_limiter_app.py, werkzeug's threaded server on a free
// loopback port, memory and Redis storage) and the Lua scripts of limits 2.8, driven unwrapped
// by `rlcheck redis --script`. The Redis is the shared test one, database 11 (this file's
// only). Each case speaks for clients or keys of its own. Loads are a few seconds at tens of
// requests per second; only verdicts are asserted. A memory and a Redis variant of one
// strategy run side by side (two rlcheck processes at once). scripts/install-deps.sh installs
// the packages; where one is missing its cases say so in one line and pass.

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/real_gateways.hpp"
#include "support/real_server.hpp"
#include "support/run_binary.hpp"
#include "support/side_by_side.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

constexpr const char* k_lua_dir =
    "/usr/lib/python3/dist-packages/limits/resources/redis/lua_scripts";

std::string redis_db_url() {
  return flask_limiter_redis_url();
}

// `rlcheck http <app><path> --json -H X-Client:<client>-{id} <flags>`.
std::vector<std::string> http_args(const std::string& path, const std::string& client,
                                   const std::string& flags) {
  std::vector<std::string> args{"http", flask_limiter_app().server->base_url() + path, "--json",
                                "-H", "X-Client: " + client + "-{id}"};
  for (std::string& word : words_of(flags))
    args.push_back(std::move(word));
  return args;
}

// `rlcheck redis --redis <db 11> --script <limits' script> --json <flags>`.
std::vector<std::string> script_args(const std::string& script, const std::string& flags) {
  std::vector<std::string> args{
      "redis", "--redis", redis_db_url(), "--script", std::string(k_lua_dir) + "/" + script,
      "--json"};
  for (std::string& word : words_of(flags))
    args.push_back(std::move(word));
  return args;
}

bool flask_skipped() {
  return skipped(flask_limiter_app(), k_flask_limiter_missing);
}

bool scripts_skipped() {
  if (std::filesystem::exists(k_lua_dir))
    return false;
  MESSAGE(
      std::string("limits' Lua scripts not installed (apt-get install python3-limits): skipped"));
  return true;
}

}  // namespace

TEST_CASE("real Flask-Limiter moving-window keeps --contract sliding; its Retry-After is late") {
  if (flask_skipped())
    return;
  // 8 clients at 3/s each for 4 s against 5 per 2 s: every client's 5 admissions spread over
  // 1.3 s, and its denials come while the oldest of them is about to leave. The Redis variant
  // is given no --limit or --window: it reads them from the X-RateLimit headers.
  const std::string load = "--identities 8 --rate 24/s --duration 4s --contract sliding ";
  const std::vector<json> reports =
      run_side_by_side({http_args("/moving-window/", "moving", load + "--limit 5 --window 2s"),
                        http_args("/moving-window-redis/", "moving-redis", load)},
                       {1, 1});
  for (const json& report : reports) {
    INFO(checks_of(report));
    CHECK(check_status(report, "limit") == "pass");
    CHECK(check_status(report, "contract") == "pass");
    CHECK(check_status(report, "utilisation") == "pass");
    CHECK(check_status(report, "retry-after-present") == "pass");
    // limits 2.8 reports the newest admission in the window as its start (its entries are kept
    // newest first), so Retry-After names that one's expiry, not the oldest's: up to the
    // spread of the admissions late.
    CHECK(check_status(report, "retry-after-accuracy") == "fail");
    CHECK(check_detail(report, "retry-after-accuracy").find(", 0 late") == std::string::npos);
  }
  const json& inferred = reports[1];
  CHECK(inferred["params"]["limit"] == 5);
  CHECK(inferred["params"]["window_ms"] == 2000);
  CHECK(inferred["params"]["sources"]["limit"] == "advertised");
  CHECK(inferred["params"]["sources"]["window_ms"] == "advertised");
}

TEST_CASE(
    "real Flask-Limiter fixed-window opens its windows at the first hit; its Retry-After is never "
    "late") {
  if (flask_skipped())
    return;
  // limits 2.8 sets a key's expiry when its count starts (memory: the first incr; Redis:
  // incr_expire.lua's EXPIRE when INCRBY returned the first amount). --exact: each client is
  // fresh, so its first window opens with its first request.
  const std::string load = "--identities 2 --rate 20/s --duration 3s --limit 5 --window 2s ";
  const std::string first_hit = load + "--contract fixed --anchor first-hit --exact";
  // Started 1 s before a boundary of the clock's 2 s windows, the first-hit window runs 1 s
  // into the next clock window, where the clock's reading has room and the limiter denies
  // (--exact: those denials come in the run's first window, judged only for fresh clients).
  const std::string clock =
      load + "--contract fixed --anchor clock --start-before-boundary 1s --exact";
  // Where the windows start left unstated: both readings are tried, and the first-hit one
  // passes (the report says it was a reading).
  const std::string unstated = load + "--contract fixed --start-before-boundary 1s --exact";
  const std::vector<json> reports =
      run_side_by_side({http_args("/fixed-window/", "fixed", first_hit),
                        http_args("/fixed-window-redis/", "fixed-redis", first_hit),
                        http_args("/fixed-window/", "fixed-clock", clock),
                        http_args("/fixed-window-redis/", "fixed-redis-clock", clock),
                        http_args("/fixed-window/", "fixed-unstated", unstated)},
                       {k_any_verdict, k_any_verdict, 1, 1, k_any_verdict});
  // Its decisions keep the first-hit contract. Its Retry-After is int(int(expiry) + 1 - now):
  // rounded down, early by the fraction of a second a denial comes before its window's end's
  // phase in the second, which a run shows or not by where its denials fell (a hint is the
  // least time to wait, RFC 9110 10.2.3): retry-after-accuracy may fail, and only as early.
  for (const size_t i : {size_t{0}, size_t{1}, size_t{4}}) {
    INFO(checks_of(reports[i]));
    CHECK(check_status(reports[i], "limit") == "pass");
    CHECK(check_status(reports[i], "contract") == "pass");
    CHECK(check_status(reports[i], "utilisation") == "pass");
    if (check_status(reports[i], "retry-after-accuracy") == "fail")
      CHECK(check_detail(reports[i], "retry-after-accuracy").find(", 0 late by") !=
            std::string::npos);
    else
      CHECK(reports[i]["verdict"] == "pass");
  }
  for (size_t i = 2; i < 4; ++i) {
    INFO(checks_of(reports[i]));
    CHECK(check_status(reports[i], "limit") == "pass");
    CHECK(check_status(reports[i], "utilisation") == "fail");
  }
  const json& unstated_report = reports[4];
  INFO(checks_of(unstated_report));
  CHECK(unstated_report["params"]["anchor"] == "first-hit");
  CHECK(unstated_report["params"]["sources"]["anchor"] == "reading");
  CHECK(check_detail(unstated_report, "contract")
            .find("--anchor not given: judged with windows opened at the first hit") !=
        std::string::npos);
}

TEST_CASE("real Flask-Limiter fixed-window-elastic-expiry locks out a client that keeps sending") {
  if (flask_skipped())
    return;
  // Every hit, denied or not, pushes the window's end out again: at 10/s against 5 per 2 s
  // the client's first 5 are its last.
  const std::string load =
      "--rate 10/s --duration 5s --limit 5 --window 2s --contract fixed "
      "--anchor first-hit --exact";
  const std::vector<json> reports =
      run_side_by_side({http_args("/fixed-window-elastic-expiry/", "elastic", load),
                        http_args("/fixed-window-elastic-expiry-redis/", "elastic-redis", load)},
                       {1, 1});
  for (const json& report : reports) {
    INFO(checks_of(report));
    CHECK(report["runs"][0]["allowed"] == 5);
    CHECK(check_status(report, "limit") == "pass");
    CHECK(check_status(report, "utilisation") == "fail");
    CHECK(check_detail(report, "utilisation").find("denial counting") != std::string::npos);
    CHECK(report["runs"][0]["utilisation"].contains("denial_counting"));
  }
}

TEST_CASE("real limits scripts: acquire_moving_window.lua and incr_expire.lua keep their windows") {
  if (scripts_skipped())
    return;
  // acquire_moving_window.lua: ARGV timestamp (seconds, the client's clock), limit, expiry
  // (seconds), amount; replies true or false (nil): a sliding log, no retry hint.
  // incr_expire.lua: ARGV expiry (seconds), amount; replies the count: fixed windows opened at
  // the first hit. Each at 40/s for 2 s against 5 per 1 s.
  const std::string load = "--limit 5 --window 1s --rate 40/s --duration 2s -r 1 ";
  const std::string log_args = "--arg {now_s} --arg 5 --arg {window_s} --arg 1 ";
  const std::string count_args = "--reply count --arg {window_s} --arg 1 --contract fixed ";
  const std::vector<json> reports = run_side_by_side(
      {script_args("acquire_moving_window.lua", log_args + load),
       script_args("incr_expire.lua", count_args + "--anchor first-hit " + load),
       // The same scripts misread: the log told to hold 4, the counter judged on the clock's
       // windows (started half a window before a boundary, where the two part).
       script_args("acquire_moving_window.lua", log_args +
                                                    "--window 1s --rate 40/s --duration 2s -r 1 "
                                                    "--limit 4"),
       script_args("incr_expire.lua",
                   count_args + "--anchor clock --start-before-boundary 500ms " + load)},
      {0, 0, 1, 1});
  for (size_t i = 0; i < 2; ++i) {
    INFO(checks_of(reports[i]));
    CHECK(check_status(reports[i], "limit") == "pass");
    CHECK(check_status(reports[i], "contract") == "pass");
    CHECK(check_status(reports[i], "utilisation") == "pass");
    CHECK(check_status(reports[i], "key-ttl") == "pass");
    CHECK(reports[i]["runs"][0]["allowed"].get<int>() >= 10);  // two windows' worth at least
  }
  INFO(checks_of(reports[2]));
  INFO(checks_of(reports[3]));
  CHECK(check_status(reports[2], "limit") == "fail");
  CHECK(check_status(reports[2], "contract") == "fail");
  CHECK(check_status(reports[3], "limit") == "pass");
  CHECK(check_status(reports[3], "utilisation") == "fail");
}

TEST_CASE("real limits gcra_consume.lua: its key expires in milliseconds meant as seconds") {
  if (scripts_skipped())
    return;
  // redis_rate's reply shape {allowed, remaining, retry_after, reset_after}; ARGV burst, rate,
  // period (seconds), cost. It stores its theoretical arrival time with SET ... PX reset_in,
  // reset_in being seconds: the state is gone milliseconds later, and nearly every request of a
  // client at 40/s is admitted against a bucket of 5 refilled 5/s.
  const std::vector<json> reports =
      run_side_by_side({script_args("gcra_consume.lua",
                                    "--reply rate --arg 5 --arg 5 --arg 1 --arg 1 "
                                    "--contract gcra --burst 5 --refill 5/s --limit 5 "
                                    "--window 1s --rate 40/s --duration 2s -r 1")},
                       {1});
  INFO(checks_of(reports[0]));
  CHECK(check_status(reports[0], "limit") == "fail");
  CHECK(check_status(reports[0], "contract") == "fail");
  CHECK(reports[0]["runs"][0]["allowed"].get<int>() > 5 + 2 * 5 + 1);
}
