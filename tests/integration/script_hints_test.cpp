// Scripts whose hints are whole seconds, or that reply a bare count, against a real
// redis-server: --hint-resolution (auto looks at every hint of the test), --reply count, a Lua
// false as a denial, and the {now_s} and {window_s} placeholders. Every run is a burst in the
// closed model, over in milliseconds against a window of seconds, so the verdicts cannot depend
// on timing. Database 7 keeps these keys apart from the other integration tests.

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

// `rlcheck redis --json --script tests/fixtures/replies/<script> <flags>`, exiting `expected`.
json run_script(const std::string& script, const std::string& flags, int expected) {
  std::vector<std::string> args{"redis",    "--json",
                                "--redis",  TestRedis::shared().tcp_url() + "/7",
                                "--script", fixture("replies/" + script)};
  append_words(args, flags);
  return json_report(args, expected);
}

// Limit 5 per 1.5 s: the slot frees 1.5 s after the burst, and the script says 2 s (math.ceil).
// Such hints are longer than the window: --max-retry-after 2s accepts them.
constexpr const char* k_ceiled =
    "--reply rate -l 5 -w 1500ms --max-retry-after 2s -n 12 -p 12 -r 2 ";

}  // namespace

TEST_CASE("--reply rate with whole-second hints: auto judges them as whole seconds and passes") {
  const json report = run_script("rate_whole_seconds.lua", k_ceiled, 0);
  for (const auto& run : report["runs"]) {
    CHECK(run["allowed"] == 5);
    CHECK(run["denied"] == 7);  // {false, ...}: a nil allowed slot is a denial, not an error
    CHECK(run["errors"] == 0);
  }
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
  CHECK(report["params"]["hint_resolution"] == "1s");
  CHECK(report["params"]["hint_resolution_ms"] == 1000);
  CHECK(report["params"]["sources"]["hint_resolution"] == "inferred");
  CHECK(check_detail(report, "retry-after-accuracy").find("--hint-resolution auto") !=
        std::string::npos);

  const json seconds =
      run_script("rate_whole_seconds.lua", k_ceiled + std::string("--hint-resolution 1s"), 0);
  CHECK(seconds["params"]["hint_resolution"] == "1s");
  CHECK(seconds["params"]["sources"]["hint_resolution"] == "flag");
}

TEST_CASE("--hint-resolution 1ms judges the same hints to the millisecond: every one is late") {
  const json report =
      run_script("rate_whole_seconds.lua", k_ceiled + std::string("--hint-resolution 1ms"), 1);
  CHECK(check_status(report, "retry-after-accuracy") == "fail");
  CHECK(check_status(report, "limit") == "pass");  // the decisions themselves are right
  CHECK(report["params"]["hint_resolution"] == "1ms");
  CHECK(report["params"]["sources"]["hint_resolution"] == "flag");
  for (const auto& run : report["runs"])
    CHECK(run["retry_error"]["late"] == 7);
  // The detail says what would judge them as whole seconds.
  CHECK(check_detail(report, "retry-after-accuracy").find("auto or 1s") != std::string::npos);
}

TEST_CASE("--reply count: a bare hit count on the client's clock ({now_s}, {window_s}) passes") {
  const json report = run_script(
      "count_client_clock.lua",
      "--reply count --arg {now_s} --arg {window_s} --arg {uuid} -l 5 -w 2s -n 12 -p 12 -r 2", 0);
  for (const auto& run : report["runs"]) {
    CHECK(run["allowed"] == 5);
    CHECK(run["denied"] == 7);
    CHECK(run["errors"] == 0);
  }
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "key-ttl") == "pass");
  // The script refuses a time without a fraction: {now_ms} is an error reply, every request.
  const json wrong = run_script(
      "count_client_clock.lua",
      "--reply count --arg {now_ms} --arg {window_s} --arg {uuid} -l 5 -w 2s -n 4 -p 4 -r 1", 3);
  CHECK(wrong["runs"][0]["errors"] == 4);
}
