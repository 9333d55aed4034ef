// Symfony's RateLimiter as Debian ships it (php-symfony-rate-limiter 5.4): its token bucket
// with a Rate amount adds 5 tokens at each whole second counted from the bucket's creation,
// none between (tests/fixtures/symfony_limiter/index.php behind `php -S` with 4 workers).
// Judged as a bucket that refills in steps it keeps its contract; judged smooth, its denials
// between ticks come while a smooth bucket would have had a token. Both judgements run side
// by side on clients of their own; only verdicts are asserted. scripts/install-deps.sh
// installs the packages; where they are missing the case says so in one line and passes.

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

// `rlcheck http <symfony> --json -H X-Client:<client>-{id} <load> <contract>`.
std::vector<std::string> symfony_args(const std::string& client, const std::string& contract) {
  std::vector<std::string> args{"http", symfony_limiter().server->base_url() + "/", "--json", "-H",
                                "X-Client: " + client + "-{id}"};
  // 4 clients at 10/s each for 4 s against a bucket of 10 refilled 5 a second: each spends
  // its burst in the first second, then is admitted 5 at every tick and denied between.
  for (std::string& word :
       words_of("--identities 4 --rate 40/s --duration 4s --contract token-bucket --burst 10 " +
                contract))
    args.push_back(std::move(word));
  return args;
}

}  // namespace

TEST_CASE(
    "real Symfony token bucket keeps --refill 5/1s,steps; judged smooth it fails "
    "utilisation") {
  if (skipped(symfony_limiter(), k_symfony_missing))
    return;
  const std::vector<json> reports = run_side_by_side(
      {symfony_args("steps", "--refill 5/1s,steps"), symfony_args("smooth", "--refill 5/1s")},
      {0, 1});
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
}
