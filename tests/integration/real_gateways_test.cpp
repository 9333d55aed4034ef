// The gateways teams run, as Debian ships them: nginx-light's limit_req and HAProxy 2.6's stick
// tables, each started here on a free loopback port with a config written to a scratch
// directory, shared by the test cases of this file (each case speaks for clients of its own:
// its own X-Client values or source addresses) and stopped when the tests end. For each
// limiter the flags that say what it promises pass, and a misreading or a misconfiguration is
// caught by the check named for it. Loads are a few seconds at tens of requests per second;
// only verdicts are asserted. scripts/install-deps.sh installs both packages; where one is
// missing its cases say so in one line and pass.

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/real_gateways.hpp"
#include "support/real_server.hpp"
#include "support/run_binary.hpp"
#include "support/side_by_side.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck http <server><path> --json <flags>`.
std::vector<std::string> http_args(const Gateway& gateway, const std::string& path,
                                   const std::string& flags) {
  std::vector<std::string> args{"http", gateway.server->base_url() + path, "--json"};
  for (std::string& word : words_of(flags))
    args.push_back(std::move(word));
  return args;
}

// One such run; the exit code must be `expected`.
json run_http(const Gateway& gateway, const std::string& path, const std::string& flags,
              int expected) {
  return run_side_by_side({http_args(gateway, path, flags)}, {expected})[0];
}

// An X-Client header for `test`'s identities: no other case shares their limiter state.
std::string client_header(const std::string& test) {
  return "-H X-Client:" + test + "-{id} ";
}

// Two clients at 20/s each for 2 s, against 10/s: each meets its burst and then the rate.
// nginx sends no Retry-After and advertises no limit: the bucket's (or the queue's) flags say
// the whole promise.
constexpr const char* k_nginx_load =
    "--identities 2 --rate 40/s --duration 2s --no-require-retry-after ";

}  // namespace

TEST_CASE("real nginx limit_req burst=4 nodelay: a token bucket of burst 5 refilled 10/s") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  const json report = run_http(
      server, "/nodelay/",
      client_header("bucket") + k_nginx_load + "--contract token-bucket --burst 5 --refill 10/s",
      0);
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK(report["runs"][0]["allowed"].get<int>() >= 10);  // each client's burst of 5 at least
  CHECK(report["runs"][0]["denied"].get<int>() > 0);
  CHECK(report["runs"][0]["errors"] == 0);
}

TEST_CASE("real nginx limit_req burst=4 nodelay: a contract of burst 3 fails limit and contract") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  // The burst of 5 nginx admits at once is more than a bucket of 3 allows.
  const json report = run_http(server, "/nodelay/",
                               client_header("small-burst") + k_nginx_load +
                                   "--contract token-bucket --burst 3 --refill 10/s",
                               1);
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "fail");
  CHECK(check_status(report, "contract") == "fail");
}

TEST_CASE("real nginx limit_req with its default status 503: named, then accepted as a denial") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  const std::string load =
      k_nginx_load + std::string("--contract token-bucket --burst 5 --refill 10/s ");
  const std::vector<json> reports = run_side_by_side(
      {http_args(server, "/deny-503/", client_header("deny-503") + load),
       http_args(server, "/deny-503/",
                 client_header("deny-503-accepted") + load + "--denied-status 503")},
      {3, 0});
  const json& unread = reports[0];
  INFO(checks_of(unread));
  CHECK(check_status(unread, "errors") == "fail");
  CHECK(check_detail(unread, "errors").find("--denied-status 503") != std::string::npos);
  const json& accepted = reports[1];
  INFO(checks_of(accepted));
  CHECK(check_status(accepted, "contract") == "pass");
  CHECK(accepted["runs"][0]["denied"].get<int>() > 0);
}

TEST_CASE("real nginx limit_req keyed by $binary_remote_addr: each source address a client") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  // Three clients at 20/s each from 127.0.0.2-4 (every 127/8 address is the loopback's on
  // Linux); no other case sends from these addresses.
  const json report = run_http(server, "/by-address/",
                               "--identities 3 --source-address 127.0.0.2-127.0.0.4 "
                               "--rate 60/s --duration 2s "
                               "--no-require-retry-after "
                               "--contract token-bucket --burst 5 --refill 10/s",
                               0);
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  // Had the three shared one address, the limiter would have admitted one client's share.
  CHECK(report["runs"][0]["allowed"].get<int>() >= 3 * 5);
}

TEST_CASE("real nginx limit_req burst=8 without nodelay: a queue of 8 drained at 10/s") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  // Two clients at 20/s each for 2 s: each fills its queue (waits up to 800 ms) and is denied
  // past it. The queue's rate is --refill (--rate is the load's). Told the queue holds 4, or
  // drains at 20/s, its requests wait 800 ms, longer than either promises (400 ms); a nodelay
  // location lets its whole burst through at once, which no queue's departures do.
  const std::vector<json> reports = run_side_by_side(
      {http_args(
           server, "/queued/",
           client_header("queue") + k_nginx_load + "--contract queue --refill 10/s --queue 8"),
       http_args(
           server, "/queued/",
           client_header("queue-of-4") + k_nginx_load + "--contract queue --refill 10/s --queue 4"),
       http_args(server, "/queued/",
                 client_header("queue-at-20") + k_nginx_load +
                     "--contract queue --refill 20/s --queue 8"),
       http_args(server, "/nodelay/",
                 client_header("nodelay-as-queue") + k_nginx_load +
                     "--contract queue --refill 10/s --queue 4")},
      {0, 1, 1, 1});
  const json& queue = reports[0];
  INFO(checks_of(queue));
  CHECK(check_status(queue, "contract") == "pass");
  CHECK(check_status(queue, "delay") == "pass");
  CHECK(check_status(queue, "utilisation") == "pass");
  CHECK(queue["runs"][0]["denied"].get<int>() > 0);
  for (size_t i = 1; i < 3; ++i) {
    INFO(checks_of(reports[i]));
    CHECK(check_status(reports[i], "delay") == "fail");
  }
  INFO(checks_of(reports[3]));
  CHECK(check_status(reports[3], "contract") == "fail");
}

TEST_CASE(
    "real haproxy http_req_rate counts its denials: a client that keeps sending is locked "
    "out") {
  const Gateway& server = haproxy();
  if (skipped(server, k_haproxy_missing))
    return;
  // One client at 20/s for 3 s against 5 per second: every request, denied or not, keeps the
  // rate above 5, so after its first 5 it is never admitted again.
  const json report = run_http(server, "/every-request/",
                               client_header("req-rate") +
                                   "--rate 20/s --duration 3s --limit 5 --window 1s "
                                   "--no-require-retry-after",
                               1);
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "fail");
  CHECK(check_detail(report, "utilisation").find("denial counting") != std::string::npos);
  CHECK(report["runs"][0]["utilisation"].contains("denial_counting"));
  CHECK(report["runs"][0]["allowed"] == 5);
}

TEST_CASE(
    "real haproxy gpc0_rate counting admissions only: a sliding-window counter opened at "
    "the first hit") {
  const Gateway& server = haproxy();
  if (skipped(server, k_haproxy_missing))
    return;
  // HAProxy's rate counters keep two periods and weigh the previous one; a new entry's first
  // period starts with its first request. --exact: the counters start empty (fresh clients),
  // so the first-hit grid is judged from the first admission on.
  const std::string load =
      "--identities 2 --rate 40/s --duration 3s --window 1s --exact "
      "--no-require-retry-after --contract sliding-counter "
      "--anchor first-hit ";
  // Claimed 3 per second, it admits more than such a counter would, by a margin that a loaded
  // machine's wider latencies cannot hide (claimed 4, the excess of one admission a period
  // could fall inside the uncertainty of the replies' instants). On the clock's grid
  // (started half a period before a clock second) the counter's periods are not HAProxy's,
  // which denies while the clock's reading has room.
  const std::vector<json> reports = run_side_by_side(
      {http_args(server, "/admissions/", client_header("gpc") + load + "--limit 5"),
       http_args(server, "/admissions/", client_header("gpc-claim-3") + load + "--limit 3"),
       http_args(server, "/admissions/",
                 client_header("gpc-clock") +
                     "--identities 2 --rate 40/s --duration 3s --window 1s --exact "
                     "--no-require-retry-after --contract sliding-counter --anchor clock "
                     "--start-before-boundary 500ms --limit 5")},
      {0, 1, 1});
  const json& report = reports[0];
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK(report["runs"][0]["utilisation"].contains("denial_counting") == false);
  const json& smaller = reports[1];
  INFO(checks_of(smaller));
  CHECK(check_status(smaller, "limit") == "fail");
  CHECK(check_status(smaller, "contract") == "fail");
  const json& clock = reports[2];
  INFO(checks_of(clock));
  CHECK(check_status(clock, "limit") == "pass");
  CHECK(check_status(clock, "utilisation") == "fail");
}
