// `rlcheck probe` against limits that are not windows, as teams run them: nginx-light's
// limit_conn 2 in front of a backend that holds every request 400 ms
// (support/concurrency_gateways) reads as a concurrency cap of 2; rack-attack's Allow2Ban
// (tests/fixtures/rack_attack/server.rb: the 3rd request in a 2-second window of the clock bans
// for 3 s) reads as a ban:fixed:3/2s,3s; Symfony's token bucket (tests/fixtures/symfony_limiter:
// 10, and 5 more at each 1 s tick) as a bucket refilled in steps; express-slow-down
// (tests/fixtures/express_slow_down: past 3 in 3 s, 100 ms a request up to 1 s, first-hit
// windows) as a slow-down:first-hit:3/3s,100ms,1s. The flags probe prints,
// pasted into a load run against the same limiter (fresh clients), pass. Where a package is
// missing, its case says so in one line and passes. Runs in the probe's second shard, alone:
// the probe times a live limiter from outside.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/concurrency_gateways.hpp"
#include "support/json_outcome.hpp"
#include "support/real_gateways.hpp"
#include "support/run_binary.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck probe <url> -H 'X-Client: <who>-{run}' --json --max-time <budget>`, exit 0.
json probed(const std::string& url, const std::string& who, const std::string& budget) {
  std::vector<std::string> args{"probe",  url,          "-H",  "X-Client: " + who + "-{run}",
                                "--json", "--max-time", budget};
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  REQUIRE(outcome.exit_code == 0);
  return json::parse(outcome.out);
}

// The flags probe printed, pasted into `rlcheck http` with `load` from a fresh client, pass.
void check_pasted(const std::string& url, const std::string& who, const std::string& load,
                  const std::string& flags) {
  std::vector<std::string> args{"http", url, "-H", "X-Client: " + who + "-{run}-{id}", "-q"};
  append_words(args, load + " " + flags);
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("flags: " << flags);
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
}

}  // namespace

TEST_CASE("probe shapes: nginx limit_conn 2 is a concurrency cap of 2, its flags pass pasted") {
  const Gateway& server = nginx_limit_conn();
  if (skipped(server, k_nginx_missing))
    return;
  const std::string url = server.server->base_url() + "/capped/";
  const json report = probed(url, "probe-conc", "15s");
  INFO(report.dump(2));
  CHECK(report["algorithm"] == "concurrency");
  CHECK(report["limit"] == 2);
  CHECK(report["hold_ms"].get<int>() >= k_backend_hold_ms);
  const std::string flags = report["flags"];
  CHECK(flags == "--contract concurrency:2 --no-require-retry-after");
  // About 8 in progress at once without the cap: denials, each judged against the cap.
  check_pasted(url, "pasted-conc", "--rate 20/s --duration 3s --concurrency 16", flags);
}

TEST_CASE("probe shapes: rack-attack Allow2Ban is a ban, its flags pass pasted") {
  const Gateway& app = rack_attack_app();
  if (skipped(app, k_rack_attack_missing))
    return;
  const std::string url = app.server->base_url() + "/allow2ban/";
  const json report = probed(url, "probe-ban", "25s");
  INFO(report.dump(2));
  CHECK(report["algorithm"] == "ban");
  CHECK(report["limit"] == 3);
  CHECK(report["inner"] == "fixed");
  const std::string flags = report["flags"];
  CHECK(flags == "--contract ban:fixed:3/2s,3s");
  // Four clients each banned once at least, asking through the ban until it ends.
  check_pasted(url, "pasted-ban", "--identities 4 --rate 16/s --duration 4s", flags);
}

TEST_CASE("probe shapes: Symfony's token bucket refills in steps, its flags pass pasted") {
  const Gateway& app = symfony_limiter();
  if (skipped(app, k_symfony_missing))
    return;
  const std::string url = app.server->base_url() + "/";
  // Reading the bucket plans for five readmissions a tick apart (about 5.5 s) after some 2 s
  // of bursts: 12 s leaves that plan room on a loaded machine, and the sustained phase what
  // is left.
  const json report = probed(url, "probe-steps", "12s");
  INFO(report.dump(2));
  CHECK(report["algorithm"] == "token-bucket");
  CHECK(report["burst"] == 10);
  const std::string flags = report["flags"];
  CHECK(flags == "--contract token-bucket --burst 10 --refill 5/1s,steps");
  // Each client spends its burst in the first second, then meets the ticks.
  check_pasted(url, "pasted-steps", "--identities 2 --rate 20/s --duration 4s", flags);
}

TEST_CASE("probe shapes: express-slow-down is a slow-down, its flags pass pasted") {
  const Gateway& app = express_slow_down_app();
  if (skipped(app, k_express_slow_down_missing))
    return;
  const std::string url = app.server->base_url() + "/slow-down/";
  // About 8 s of probing (the first window, a batch reaching the 1 s cap, and trials a window
  // long): 30 s leaves a loaded machine room.
  const json report = probed(url, "probe-slow", "30s");
  INFO(report.dump(2));
  CHECK(report["algorithm"] == "slow-down");
  CHECK(report["limit"] == 3);
  CHECK(report["anchor"] == "first-hit");
  const std::string flags = report["flags"];
  CHECK(flags == "--contract slow-down:first-hit:3/3s,100ms,1s --no-require-retry-after");
  // Clients paced past a window, each slowed to the cap and back.
  check_pasted(url, "pasted-slow", "--rate 8/s --duration 4500ms -p 16", flags);
}
