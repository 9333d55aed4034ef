// rack-attack's Allow2Ban as Debian ships it (ruby-rack-attack, served by WEBrick from
// tests/fixtures/rack_attack/server.rb): the 3rd request of a client in a fixed 2-second window
// of the clock bans it for 3 s. Judged against the ban it keeps, it passes; against a ban stated
// shorter its denials after that ban's end are lock-outs, against one stated longer its
// admissions after 3 s come during the ban; judged as a window alone, its bans are lock-outs,
// and the contract fit proposes the ban it keeps.
// The four run side by side, each with clients of its own. scripts/install-deps.sh installs
// the packages; where one is missing the case says so in one line and passes.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/real_gateways.hpp"
#include "support/real_server.hpp"
#include "support/run_binary.hpp"
#include "support/side_by_side.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// `rlcheck http <app>/allow2ban/ --json -H X-Client:<client>-{id}` at 4 requests a second for
// each of 6 clients for 8 s: every client is banned at least once, and asks through its bans.
// `contract` is a --contract, or the words that name the limit and window without one.
std::vector<std::string> allow2ban_args(const std::string& client, const std::string& contract) {
  std::vector<std::string> args{"http", rack_attack_app().server->base_url() + "/allow2ban/",
                                "--json", "-H", "X-Client: " + client + "-{id}"};
  if (contract.starts_with("--")) {
    for (std::string& word : words_of(contract))
      args.push_back(std::move(word));
  } else {
    args.insert(args.end(), {"--contract", contract});
  }
  for (std::string& word : words_of("--identities 6 --rate 24/s --duration 8s"))
    args.push_back(std::move(word));
  return args;
}

}  // namespace

TEST_CASE("real rack-attack Allow2Ban keeps its ban contract; a ban stated otherwise fails") {
  if (skipped(rack_attack_app(), k_rack_attack_missing))
    return;
  // The kept contract's page: its timelines shade the bans surely in force.
  const std::string html =
      (std::filesystem::temp_directory_path() / fmt::format("rlcheck-allow2ban-{}.html", getpid()))
          .string();
  std::vector<std::string> kept_args = allow2ban_args("kept", "ban:fixed:3/2s,3s");
  kept_args.insert(kept_args.end(), {"--html", html});
  const std::vector<json> reports =
      run_side_by_side({kept_args, allow2ban_args("shorter", "ban:fixed:3/2s,1s"),
                        allow2ban_args("longer", "ban:fixed:3/2s,6s"),
                        allow2ban_args("window", "--limit 3 --window 2s")},
                       {0, 1, 1, 1});
  const json& kept = reports[0];
  INFO(checks_of(kept));
  CHECK(check_status(kept, "limit") == "pass");
  CHECK(check_status(kept, "contract") == "pass");
  CHECK(check_detail(kept, "contract").find("none admitted during one") != std::string::npos);
  CHECK(check_status(kept, "utilisation") == "pass");
  CHECK(check_status(kept, "retry-after-accuracy") == "pass");
  CHECK(check_detail(kept, "retry-after-accuracy").find("against the ban's end") !=
        std::string::npos);
  std::ifstream page(html);
  const std::string drawn((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  std::filesystem::remove(html);
  CHECK(drawn.find("<rect class=\"ban-span\"") != std::string::npos);
  CHECK(drawn.find("surely banned (--contract ban)") != std::string::npos);

  // Stated 1 s, the 3 s ban denies long after any 1 s ban (or one begun again) had ended.
  const json& shorter = reports[1];
  INFO(checks_of(shorter));
  CHECK(check_status(shorter, "contract") == "pass");
  CHECK(check_status(shorter, "utilisation") == "fail");
  CHECK(check_detail(shorter, "utilisation").find("no ban could still be in force") !=
        std::string::npos);

  // Stated 6 s, rack-attack admits again 3 s after a ban began.
  const json& longer = reports[2];
  INFO(checks_of(longer));
  CHECK(check_status(longer, "contract") == "fail");
  CHECK(check_detail(longer, "contract").find("admitted during a ban") != std::string::npos);
  CHECK(check_status(longer, "utilisation") == "pass");

  // Without the ban (judged by the sliding window a test without --contract names), the
  // window alone cannot explain the denials. The fit proposes the ban the kept case passes,
  // unless a sliding window of 3 stretched over the bans explains these records first (where
  // no client's admissions bunched across a boundary of rack-attack's windows).
  const json& window = reports[3];
  INFO(checks_of(window));
  CHECK(check_status(window, "utilisation") == "fail");
  REQUIRE(window.contains("contract_fit"));
  const json& fit = window["contract_fit"];
  MESSAGE("fit: " << fit.dump());
  if (fit["contract"] == "ban") {
    CHECK(fit["flags"] == "--contract ban:fixed:3/2s,3s");
    CHECK(fit["ban_ms"] == 3000);
    CHECK(check_detail(window, "utilisation")
              .find("the observations fit --contract ban:fixed:3/2s,3s") != std::string::npos);
  } else {
    CHECK(fit["contract"] == "sliding");
    CHECK(fit["limit"] == 3);
    CHECK(fit["window_ms"].get<int64_t>() > 2000);
  }
}
