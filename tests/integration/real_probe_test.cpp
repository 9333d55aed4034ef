// `rlcheck probe` against the gateways teams run, as Debian ships them (support/real_gateways:
// nginx-light's limit_req, HAProxy 2.6's stick tables): each is classified as what it is, and
// the flags probe prints, pasted into a load run against the same limiter (fresh clients),
// pass. Runs in the probe's shard, alone: the probe times a live limiter from outside.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/real_gateways.hpp"
#include "support/run_binary.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck probe <gateway><path> -H 'X-Client: <who>-{run}' --json <extra>`.
ProcessOutcome probe(const Gateway& gateway, const std::string& path, const std::string& who,
                     const std::string& extra = "") {
  std::vector<std::string> args{"probe",  gateway.server->base_url() + path,
                                "-H",     "X-Client: " + who + "-{run}",
                                "--json", "--max-time",
                                "30s"};
  append_words(args, extra);
  return run_rlcheck(args);
}

json probed(const Gateway& gateway, const std::string& path, const std::string& who) {
  const ProcessOutcome outcome = probe(gateway, path, who);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  REQUIRE(outcome.exit_code == 0);
  return json::parse(outcome.out);
}

// The flags probe printed, pasted into `rlcheck http` for three seconds at 30/s from fresh
// clients, pass.
void check_pasted(const Gateway& gateway, const std::string& path, const std::string& who,
                  const std::string& flags) {
  std::vector<std::string> args{"http",       gateway.server->base_url() + path,
                                "-H",         "X-Client: " + who + "-{run}",
                                "--rate",     "30/s",
                                "--duration", "3s",
                                "-q"};
  append_words(args, flags);
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("flags: " << flags);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
}

}  // namespace

TEST_CASE("real probe: nginx nodelay is a token bucket of burst + 1, its flags pass pasted back") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  const json report = probed(server, "/nodelay/", "probe-bucket");
  INFO(report.dump(2));
  CHECK(report["algorithm"] == "token-bucket");
  CHECK(report["burst"] == 5);
  // nginx sends no Retry-After: the flags say so, or retry-after-present would fail them.
  const std::string flags = report["flags"];
  CHECK(flags.find("--no-require-retry-after") != std::string::npos);
  check_pasted(server, "/nodelay/", "pasted-bucket", flags);
}

TEST_CASE("real probe: nginx without nodelay is a queue of its burst, its flags pass pasted back") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  const json report = probed(server, "/queued/", "probe-queue");
  CHECK(report["algorithm"] == "queue");
  CHECK(report["queue"] == 8);
  const std::string flags = report["flags"];
  CHECK(flags.find("--contract queue --refill 10/s --queue 8") != std::string::npos);
  check_pasted(server, "/queued/", "pasted-queue", flags);
}

TEST_CASE("real probe: nginx's default 503 is named with the --denied-status that accepts it") {
  const Gateway& server = nginx();
  if (skipped(server, k_nginx_missing))
    return;
  const ProcessOutcome outcome = probe(server, "/deny-503/", "probe-503");
  INFO("stdout: " << outcome.out);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.out.find("pass --denied-status 503") != std::string::npos);
  const json report =
      json::parse(probe(server, "/deny-503/", "probe-503b", "--denied-status 503").out);
  CHECK(report["algorithm"] == "token-bucket");
}

TEST_CASE("real probe: HAProxy's gpc0 rate is a first-hit sliding-window counter") {
  const Gateway& server = haproxy();
  if (skipped(server, k_haproxy_missing))
    return;
  const json report = probed(server, "/admissions/", "probe-counter");
  CHECK(report["algorithm"] == "sliding-counter");
  CHECK(report["anchor"] == "first-hit");
  CHECK(report["limit"] == 5);
  // Fresh clients: --exact judges the first-hit grid from the run's first admission.
  check_pasted(server, "/admissions/", "pasted-counter",
               report["flags"].get<std::string>() + " --exact");
}

TEST_CASE("real probe: HAProxy's http_req_rate counts its denials, and probe suggests no flags") {
  const Gateway& server = haproxy();
  if (skipped(server, k_haproxy_missing))
    return;
  const json report = probed(server, "/every-request/", "probe-counting");
  CHECK(report["algorithm"] == "denial-counting");
  CHECK(report["denial_counting"] == true);
  CHECK(report["flags"] == "");
}

TEST_CASE("real probe: Flask-Limiter's fixed window opens at the first hit, advertised as it is") {
  const Gateway& app = flask_limiter_app();
  if (skipped(app, k_flask_limiter_missing))
    return;
  const json report = probed(app, "/fixed-window/", "probe-fixed");
  CHECK(report["algorithm"] == "fixed");
  CHECK(report["anchor"] == "first-hit");
  CHECK(report["limit"] == 5);
  // The epoch X-RateLimit-Reset reads as 2 s or 3 s: the reading the measurement agrees with.
  CHECK(report["advertised"]["window_ms"] == 2000);
  CHECK(report["advertised_matches"] == true);
}
