// Symfony's RateLimiter as Debian ships it (php-symfony-rate-limiter 5.4): its token bucket
// with a Rate amount adds 5 tokens at each whole second counted from the bucket's creation,
// none between (tests/fixtures/symfony_limiter/index.php behind `php -S` with 4 workers).
// Judged as a bucket that refills in steps it keeps its contract, its ticks placed anywhere or,
// with --anchor first-hit, where Symfony counts them (from each bucket's creation; --exact: the
// clients' buckets are new); judged smooth, its denials between ticks come while a smooth
// bucket would have had a token; with no contract named, the contract fit proposes the bucket
// in steps; with --anchor clock, where Symfony does not tick, its denials had room. The five
// run side by side on clients of their own; only verdicts are asserted.
// scripts/install-deps.sh installs the packages; where they are missing the case says so in one
// line and passes.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/real_gateways.hpp"
#include "support/real_server.hpp"
#include "support/side_by_side.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck http <symfony> --json -H X-Client:<client>-{id} <load> <judged by>`.
std::vector<std::string> symfony_args(const std::string& client, const std::string& judged_by) {
  std::vector<std::string> args{"http", symfony_limiter().server->base_url() + "/", "--json", "-H",
                                "X-Client: " + client + "-{id}"};
  // 4 clients at 10/s each for 4 s against a bucket of 10 refilled 5 a second: each spends
  // its burst in the first second, then is admitted 5 at every tick and denied between.
  for (std::string& word : words_of("--identities 4 --rate 40/s --duration 4s " + judged_by))
    args.push_back(std::move(word));
  return args;
}

const std::string k_bucket = "--contract token-bucket --burst 10 ";

// Read with its ticks on the clock's whole seconds, the run started half a second before one:
// the clock's ticks fall half-way between Symfony's (its buckets made within 100 ms of the
// start), so each of its denials comes at least 0.4 s after a clock tick brought 5 tokens.
const std::string k_on_the_clock =
    "--refill 5/1s,steps --anchor clock --exact --window 1s --start-before-boundary 500ms";

}  // namespace

TEST_CASE(
    "real Symfony token bucket keeps --refill 5/1s,steps; judged smooth it fails "
    "utilisation") {
  if (skipped(symfony_limiter(), k_symfony_missing))
    return;
  const std::vector<json> reports =
      run_side_by_side({symfony_args("steps", k_bucket + "--refill 5/1s,steps"),
                        symfony_args("smooth", k_bucket + "--refill 5/1s"),
                        symfony_args("unnamed", "--limit 10 --window 2s"),
                        symfony_args("anchored", k_bucket + "--refill 5/1s,steps --anchor "
                                                            "first-hit --exact"),
                        symfony_args("on-clock", k_bucket + k_on_the_clock)},
                       {0, 1, 1, 0, 1});
  const json& stepped = reports[0];
  INFO(checks_of(stepped));
  CHECK(check_status(stepped, "limit") == "pass");
  CHECK(check_status(stepped, "contract") == "pass");
  CHECK(check_status(stepped, "utilisation") == "pass");
  CHECK(check_status(stepped, "retry-after-accuracy") == "pass");
  CHECK(stepped["params"]["refill"] == "5/s,steps");

  const json& smooth = reports[1];
  INFO(checks_of(smooth));
  // Symfony never admits more than a smooth bucket would: only the denials tell them apart.
  CHECK(check_status(smooth, "limit") == "pass");
  CHECK(check_status(smooth, "utilisation") == "fail");
  CHECK(check_detail(smooth, "utilisation").find("while the bucket had room") != std::string::npos);

  // No contract named, a sliding window of 10 per 2 s fails; the fit finds a bucket in steps
  // (its burst and refill as the first runs of admissions read them: 10 and 5/s, or the first
  // tick's tokens counted in the burst).
  const json& unnamed = reports[2];
  INFO(checks_of(unnamed));
  CHECK(check_status(unnamed, "limit") == "fail");
  REQUIRE(unnamed.contains("contract_fit"));
  CHECK(unnamed["contract_fit"]["contract"] == "token-bucket");
  CHECK(unnamed["contract_fit"]["refill"].get<std::string>().ends_with(",steps"));
  // The fit proposes no anchor for the ticks: it places them anywhere.
  CHECK_FALSE(unnamed["contract_fit"].contains("anchor"));

  // The ticks where Symfony puts them: the same verdicts, the limit read against the ticks.
  const json& anchored = reports[3];
  INFO(checks_of(anchored));
  CHECK(check_status(anchored, "limit") == "pass");
  CHECK(check_status(anchored, "contract") == "pass");
  CHECK(check_status(anchored, "utilisation") == "pass");
  CHECK(anchored["params"]["anchor"] == "first-hit");
  CHECK(check_detail(anchored, "limit").find("from the bucket's creation") != std::string::npos);

  // The ticks on the clock, where Symfony does not put them: its denials came with room.
  const json& on_clock = reports[4];
  INFO(checks_of(on_clock));
  CHECK(check_status(on_clock, "limit") == "pass");
  CHECK(check_status(on_clock, "utilisation") == "fail");
  CHECK(check_detail(on_clock, "utilisation").find("while the bucket had room") !=
        std::string::npos);
}
