// Sliding-window counters (`--contract sliding-counter`, `--strategy sliding-counter`) against
// a real redis-server: the built-in counter keeps its own contract under a closed burst and
// under an open model over several windows; judged as a sliding window it fails and the fit
// names the counter; a counter that forgets the previous window fails the contract.
// Database 10 keeps these keys apart from the other integration tests.
//
// Nothing here rests on timing luck: the audits place every instant where it favours the
// limiter, so a correct counter passes however slow the replies; the broken one admits a full
// limit right after each boundary while the previous window (full, a few ms before) still
// weighs almost whole, which no placement within a window can excuse.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string counter_db_url() {
  return TestRedis::shared().tcp_url() + "/10";
}

// `rlcheck redis --redis <db 10> --json` with `before` (kept whole: paths), then the
// whitespace-separated `flags`; the exit code must be `expected_exit`.
json counter_run(std::vector<std::string> before, const std::string& flags, int expected_exit) {
  std::vector<std::string> args{"redis", "--redis", counter_db_url(), "--json"};
  args.insert(args.end(), before.begin(), before.end());
  append_words(args, flags);
  return json_report(args, expected_exit);
}

// 40/s for 3 s against 10 per 1 s: three windows, so utilisation judges the run (a counter's
// state lasts two windows).
constexpr const char* k_open_load = "--limit 10 --window 1s --rate 40/s --duration 3s -r 1";

}  // namespace

TEST_CASE("sliding-counter: the built-in counter keeps its own contract under a closed burst") {
  const json report =
      counter_run({"--strategy", "sliding-counter"}, "--limit 10 --window 1s -n 100 -p 20 -r 2", 0);
  CHECK(report["params"]["contract"] == "sliding-counter");
  CHECK(report["params"]["anchor"] == "clock");
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
  CHECK(check_status(report, "key-ttl") == "pass");
  // A counter remembers two windows: one burst proves no lock-out.
  CHECK(check_status(report, "utilisation") == "skip");
  CHECK(check_detail(report, "utilisation").find("within two windows") != std::string::npos);
  CHECK(check_detail(report, "contract").find("sliding-counter contract") != std::string::npos);
  CHECK(check_detail(report, "contract").find("most in a true sliding window") !=
        std::string::npos);
  // Within one true window a counter may let through up to twice its limit (a burst that
  // straddles a boundary): reported, not failed.
  for (const json& run : report["runs"])
    CHECK(run["contract"]["true_sliding_window"]["allowed"].get<int>() <= 20);
}

TEST_CASE("sliding-counter: the built-in counter keeps its own contract over several windows") {
  const json report = counter_run({"--strategy", "sliding-counter"}, k_open_load, 0);
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
  CHECK(report["runs"][0]["utilisation"]["denials_judged"].get<int>() > 0);
  CHECK(report["runs"][0]["utilisation"]["denied_with_room"] == 0);
}

TEST_CASE("sliding-counter: judged as a sliding window it fails, and the fit names the counter") {
  // As a user script, audited by the default sliding window: a counter admits more than the
  // limit in some true windows and times its hints by its estimate, not by the oldest
  // admission; which of those checks fail depends on the phase, the fit does not.
  const json report = counter_run(
      {"--script", std::string(RLCHECK_SOURCE_DIR) + "/lua/sliding_counter.lua"}, k_open_load, 1);
  CHECK(report["params"]["contract"] == "sliding");
  REQUIRE(report.contains("contract_fit"));
  MESSAGE("fit: " << report["contract_fit"].dump());
  CHECK(report["contract_fit"]["contract"] == "sliding-counter");
  CHECK(
      report["contract_fit"]["flags"].get<std::string>().starts_with("--contract sliding-counter"));
  CHECK_FALSE(report["contract_fit"]["clears"].empty());
}

TEST_CASE("sliding-counter: a counter that forgets the previous window fails the contract") {
  const json report = counter_run({"--script", fixture("counter_forgets_previous.lua")},
                                  std::string("--contract sliding-counter ") + k_open_load, 1);
  CHECK(report["params"]["contract"] == "sliding-counter");
  CHECK(check_status(report, "contract") == "fail");
  MESSAGE("counter_forgets_previous.lua: " << check_detail(report, "contract"));
  CHECK(report["runs"][0]["contract"]["exceeded"] == true);
}

TEST_CASE("sliding-counter: --anchor is accepted with it, and compare shows it beside others") {
  // The built-in counter turns on the clock: whether a burst straddles a boundary (where a
  // first-hit grid would not turn) depends on when it starts, so only the promise judged is
  // asserted, not the verdict.
  const ProcessOutcome anchored = run_rlcheck({"redis",
                                               "--redis",
                                               counter_db_url(),
                                               "--json",
                                               "--strategy",
                                               "sliding-counter",
                                               "--contract",
                                               "sliding-counter",
                                               "--anchor",
                                               "first-hit",
                                               "--limit",
                                               "10",
                                               "--window",
                                               "1s",
                                               "-n",
                                               "30",
                                               "-p",
                                               "5",
                                               "-r",
                                               "1"});
  INFO("stderr: " << anchored.err);
  REQUIRE((anchored.exit_code == 0 || anchored.exit_code == 1));
  const json first_hit = json::parse(anchored.out);
  CHECK(first_hit["params"]["anchor"] == "first-hit");
  CHECK(check_detail(first_hit, "contract").find("sliding-counter first-hit contract") !=
        std::string::npos);

  const ProcessOutcome compared = run_rlcheck(
      {"compare", "--redis", counter_db_url(), "--strategies", "sliding-window,sliding-counter",
       "--limit", "10", "--window", "1s", "-n", "40", "-p", "10", "-r", "1", "--json"});
  INFO("stderr: " << compared.err);
  INFO("stdout: " << compared.out);
  REQUIRE(compared.exit_code == 0);
  CHECK(compared.out.find("sliding-counter") != std::string::npos);
}
