// rlcheck redis --script ACQUIRE --release-script RELEASE --hold DUR: Redis semaphores whose
// places rlcheck gives back itself, against a real redis-server. The correct one
// (examples/semaphore_acquire.lua and semaphore_release.lua) passes its cap under a steady
// load that takes places again once released; one that lets a holder more in than its cap
// fails from a burst, whose holders overlap for most of a long hold whatever the machine's
// speed; a release script that always errs is counted and named, and the run still ends.
// Database 14 keeps these keys apart from the other integration tests.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "shared/svg_reading.hpp"

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string example(const std::string& name) {
  return std::string(RLCHECK_SOURCE_DIR) + "/examples/" + name;
}

// `rlcheck redis --json` with an acquire and a release script, called with the cap, a lease
// of 10 s and a member of the request's own ({run}:{seq}, which the release gets alike).
std::vector<std::string> semaphore_run(const std::string& acquire, const std::string& release,
                                       const std::string& flags) {
  std::vector<std::string> args{"redis",
                                "--json",
                                "--redis",
                                TestRedis::shared().tcp_url() + "/14",
                                "--script",
                                acquire,
                                "--release-script",
                                release,
                                "--arg",
                                "{limit}",
                                "--arg",
                                "10000",
                                "--arg",
                                "{run}:{seq}",
                                "-r",
                                "1"};
  append_words(args, flags);
  return args;
}

const json& concurrency_of(const json& report) {
  return report["runs"][0]["contract"]["concurrency"];
}

}  // namespace

TEST_CASE("a Redis semaphore released after --hold passes its cap, places taken again") {
  const std::string html =
      (std::filesystem::temp_directory_path() / fmt::format("rlcheck-semaphore-{}.html", getpid()))
          .string();
  const json report =
      json_report(semaphore_run(example("semaphore_acquire.lua"), example("semaphore_release.lua"),
                                "--contract concurrency:3 --hold 300ms --rate 40/s --duration 2s "
                                "--concurrency 16 --html " +
                                    html),
                  0);
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");
  const json& run = report["runs"][0];
  CHECK(run["denied"].get<int>() > 0);
  CHECK(run["errors"] == 0);
  // Released 300 ms after each admission, places are taken again: more than 3 admitted (about
  // 27 on a quiet machine; fewer when the releases' timers run late).
  CHECK(run["allowed"].get<int>() > 3);
  CHECK(concurrency_of(report)["most_in_flight_surely"].get<int>() <= 3);
  CHECK(concurrency_of(report)["hold_source"] == "flag");
  // Every admission released, before the run's keys were deleted.
  CHECK(report["summary"]["releases"]["released"] == run["allowed"]);
  CHECK(report["summary"]["releases"]["failed"] == 0);
  CHECK(report["keys_left"].empty());
  // The page draws what was in flight against the cap.
  std::ifstream page(html);
  const std::string drawn((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  std::filesystem::remove(html);
  const std::string svg = first_timeline(drawn);
  CHECK(svg.find("cap (concurrency): 3 in flight at once") != std::string::npos);
  CHECK(!polyline_ys(svg, "in-flight-surely").empty());
  CHECK(!polyline_ys(svg, "in-flight-possibly").empty());
}

TEST_CASE("a semaphore that lets one holder more in fails limit and contract") {
  // 8 at once, held 1.5 s: 3 admitted where 2 is meant, all surely held together.
  const json report =
      json_report(semaphore_run(fixture("semaphore_one_over.lua"), example("semaphore_release.lua"),
                                "--contract concurrency:2 --hold 1500ms -n 8 -p 8"),
                  1);
  INFO(checks_of(report));
  CHECK(check_status(report, "limit") == "fail");
  CHECK(check_status(report, "contract") == "fail");
  CHECK(report["runs"][0]["allowed"] == 3);
  CHECK(concurrency_of(report)["most_in_flight_surely"].get<int>() == 3);
  CHECK(report["summary"]["releases"]["released"] == 3);
}

TEST_CASE("a release script that errs is counted and named; the places are read as kept") {
  const std::vector<std::string> args =
      semaphore_run(example("semaphore_acquire.lua"), fixture("release_refused.lua"),
                    "--contract concurrency:3 --hold 100ms -n 8 -p 8");
  const json report = json_report(args, 0);
  INFO(checks_of(report));
  CHECK(report["runs"][0]["allowed"] == 3);
  CHECK(report["runs"][0]["errors"] == 0);
  CHECK(report["summary"]["releases"]["released"] == 0);
  CHECK(report["summary"]["releases"]["failed"] == 3);
  CHECK(report["summary"]["releases"]["first_error"].get<std::string>().find(
            "release refused by the test") != std::string::npos);
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "utilisation") == "pass");

  std::vector<std::string> human = args;
  std::erase(human, std::string("--json"));
  const ProcessOutcome outcome = run_rlcheck(human);
  INFO(outcome.err);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.out.find("releases: 0 released, 3 failed") != std::string::npos);
}

TEST_CASE("--release-script without --hold, --script or a concurrency contract: exit 64") {
  const auto refused = [](const std::string& flags, const std::string& named) {
    std::vector<std::string> args{"redis", "--release-script", example("semaphore_release.lua")};
    append_words(args, flags);
    const ProcessOutcome outcome = run_rlcheck(args);
    INFO(flags << ": " << outcome.err);
    CHECK(outcome.exit_code == 64);
    CHECK(outcome.err.find(named) != std::string::npos);
  };
  const std::string acquire = example("semaphore_acquire.lua");
  refused("--script " + acquire + " --contract concurrency:2", "needs --hold");
  refused("--contract concurrency:2 --hold 1s", "needs --script");
  refused("--script " + acquire + " --contract sliding", "only with --contract concurrency");
  refused("--script " + acquire, "only with --contract concurrency");
  refused("--script " + acquire + " --hold 1s", "--hold");
}

TEST_CASE("a release unanswered within --timeout counts as failed, and the run ends") {
  // Two admitted, each release keeping Redis busy 600 ms against a timeout of 300 ms.
  std::vector<std::string> args =
      semaphore_run(example("semaphore_acquire.lua"), fixture("release_slow.lua"),
                    "--arg 600 --contract concurrency:2 --hold 50ms --timeout 300ms -n 2 -p 2");
  const json report = json_report(args, 0);
  INFO(checks_of(report));
  CHECK(report["runs"][0]["allowed"] == 2);
  CHECK(report["summary"]["releases"]["failed"].get<int>() >= 1);
  CHECK(report["summary"]["releases"]["failed"].get<int>() +
            report["summary"]["releases"]["released"].get<int>() ==
        2);
  CHECK(report["summary"]["releases"]["first_error"].get<std::string>().find("within --timeout") !=
        std::string::npos);
}
