// rlcheck run over the shipped scenarios, JUnit output against the common schema, and the
// Stop-hook settings block.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "process/child_process.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

const std::string k_scenarios = std::string(RLCHECK_SOURCE_DIR) + "/scenarios";

RunOptions on_test_redis() {
  RunOptions options;
  // Database 2: the scenarios' serve processes leave their (expiring) keys there, not in 0.
  options.env["REDIS_URL"] = TestRedis::shared().tcp_url() + "/2";
  options.unset_env = {"NO_COLOR"};
  return options;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "rlcheck-suite-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

}  // namespace

TEST_CASE("the shipped scenarios behave as they expect, reported in JSON and JUnit") {
  // One pass over every scenario (they take most of this file's time): both outputs at once.
  TempDir dir;
  const std::string suite_junit = (dir.path / "suite.xml").string();
  const ProcessOutcome outcome =
      run_rlcheck({"run", k_scenarios, "--json", "--junit", suite_junit}, on_test_redis());
  INFO(outcome.err);
  CHECK(outcome.exit_code == 0);
  CHECK(valid_junit(suite_junit));
  const json suite = json::parse(outcome.out);
  CHECK(suite["schema"] == "rlcheck.suite/v1");
  REQUIRE(suite["scenarios"].size() >= 6);
  bool saw_expected_failure = false;
  for (const auto& scenario : suite["scenarios"]) {
    CAPTURE(scenario["name"].get<std::string>());
    CHECK(scenario["ok"] == true);
    saw_expected_failure = saw_expected_failure || scenario["expect"] == "fail";
  }
  CHECK(saw_expected_failure);
}

TEST_CASE("a scenario whose outcome differs from its expectation exits 1 and says which") {
  TempDir dir;
  const std::string file = dir.write(
      "naive-should-pass.json",
      R"({"name": "naive claims to hold", "strategy": "naive", "runs": 2, "expect": "pass"})");
  const ProcessOutcome outcome = run_rlcheck({"run", file, "--color", "never"}, on_test_redis());
  CHECK(outcome.exit_code == 1);
  CHECK(outcome.out.find("naive claims to hold") != std::string::npos);
  CHECK(outcome.out.find("0 of 1 scenarios behaved as expected") != std::string::npos);

  RunOptions hook = on_test_redis();
  hook.stdin_mode = StdinMode::text;
  hook.stdin_text = R"({"hook_event_name":"Stop","stop_hook_active":false})";
  const ProcessOutcome blocked = run_rlcheck({"run", file, "--hook"}, hook);
  CHECK(blocked.exit_code == 2);
  CHECK(blocked.out.empty());
  CHECK(blocked.err.find("naive claims to hold") != std::string::npos);
  // By the path this rlcheck was started by, so that the line runs as pasted.
  const std::string program =
      std::filesystem::absolute(rlcheck_binary()).lexically_normal().string();
  CHECK(blocked.err.find("reproduce: " + program + " redis") != std::string::npos);
  CHECK(blocked.err.find("--strategy naive") != std::string::npos);
}

TEST_CASE("unknown scenario keys are refused naming the key and the file") {
  TempDir dir;
  const std::string file =
      dir.write("typo.json", R"({"name": "typo", "strategy": "lua", "reqests": 200})");
  const ProcessOutcome outcome = run_rlcheck({"run", file}, on_test_redis());
  CHECK(outcome.exit_code == 64);
  CHECK(lines_of(outcome.err).size() == 1);
  CHECK(outcome.err.find("typo.json") != std::string::npos);
  CHECK(outcome.err.find("'reqests'") != std::string::npos);
}

TEST_CASE("--junit writes a timed testcase per judged check, failures with their figure") {
  TempDir dir;
  const std::string junit = (dir.path / "checks.xml").string();
  const std::string report_path = (dir.path / "checks.json").string();
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--strategy", "naive", "--junit", junit, "--report", report_path, "-q"},
                  on_test_redis());
  CHECK(outcome.exit_code == 1);
  REQUIRE(valid_junit(junit));
  const std::string xml = read_text(junit);
  const json report = json::parse(read_text(report_path));
  size_t judged = 0, skipped = 0;
  for (const json& check : report.at("checks")) {
    const std::string id = check.at("id");
    CAPTURE(id);
    const bool skip = check.at("status") == "skip";
    judged += !skip;
    skipped += skip;
    const size_t at = xml.find("<testcase name=\"" + id + "\"");
    CHECK((at == std::string::npos) == skip);  // a skipped check is no testcase
    // Each judged check holds a share of the runs' time: never 0 after 4 runs.
    if (at != std::string::npos)
      CHECK(xml.substr(at, xml.find('>', at) - at).find("time=\"0.000\"") == std::string::npos);
  }
  CHECK(skipped > 0);  // exact, without --exact; retry-after-honest, without --verify-retry-after
  CHECK(xml.find("tests=\"" + std::to_string(judged) + "\"") != std::string::npos);
  CHECK(xml.find("skipped=\"0\"") != std::string::npos);
  CHECK(xml.find("<skipped") == std::string::npos);
  // Exactly two failed checks (limit, and contract locating the span), with their figures.
  CHECK(xml.find("failures=\"2\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"4 of 4 runs over the limit") != std::string::npos);
}

TEST_CASE("--junit-skipped lists the skipped checks too, as skipped testcases") {
  TempDir dir;
  const std::string junit = (dir.path / "all.xml").string();
  const ProcessOutcome outcome = run_rlcheck({"redis", "--strategy", "lua", "-n", "50", "-r", "1",
                                              "--junit", junit, "--junit-skipped", "--json"},
                                             on_test_redis());
  CHECK(outcome.exit_code == 0);
  REQUIRE(valid_junit(junit));
  const std::string xml = read_text(junit);
  const json report = json::parse(outcome.out);
  size_t skipped = 0;
  for (const json& check : report.at("checks")) {
    const std::string id = check.at("id");
    CAPTURE(id);
    const size_t at = xml.find("<testcase name=\"" + id + "\"");
    REQUIRE(at != std::string::npos);
    if (check.at("status") == "skip") {
      ++skipped;
      const std::string testcase = xml.substr(at, xml.find("</testcase>", at) - at);
      CHECK(testcase.find("time=\"0.000\">\n      <skipped message=\"") != std::string::npos);
    }
  }
  CHECK(skipped > 0);
  CHECK(xml.find("tests=\"" + std::to_string(report.at("checks").size()) + "\"") !=
        std::string::npos);
  CHECK(xml.find("skipped=\"" + std::to_string(skipped) + "\"") != std::string::npos);

  const ProcessOutcome alone = run_rlcheck({"redis", "--junit-skipped"}, on_test_redis());
  CHECK(alone.exit_code == 64);
  CHECK(alone.err.find("--junit-skipped: needs --junit") != std::string::npos);
}

TEST_CASE("hook-config prints the settings block for the given check") {
  const ProcessOutcome outcome =
      run_rlcheck({"hook-config", "--", "redis", "--strategy", "lua", "-n", "200", "-p", "50"},
                  with_rlcheck_on_path());
  CHECK(outcome.exit_code == 0);
  const json settings = json::parse(outcome.out);
  CHECK(settings["hooks"]["Stop"][0]["hooks"][0]["type"] == "command");
  CHECK(settings["hooks"]["Stop"][0]["hooks"][0]["command"] ==
        "rlcheck redis --strategy lua -n 200 -p 50 --hook");
  // docs/ci.md's block: 4 runs of 4 rounds of --timeout 5s, and the margins.
  CHECK(settings["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 168);

  TempDir dir;
  const std::string existing =
      dir.write("settings.json", R"({"model": "opus", "hooks": {"PreToolUse": [{"hooks": []}]}})");
  const ProcessOutcome merged =
      run_rlcheck({"hook-config", "--merge", existing, "--", "redis", "--strategy", "lua"});
  CHECK(merged.exit_code == 0);
  const json result = json::parse(merged.out);
  CHECK(result["model"] == "opus");
  CHECK(result["hooks"]["PreToolUse"].size() == 1);
  CHECK(result["hooks"]["Stop"].size() == 1);
}
