// --summary-md: the Markdown summary for pull requests, written whole to a file, or with auto
// appended to GitHub's job summary ($GITHUB_STEP_SUMMARY), and nothing without it.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/real_server.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::vector<std::string> lua_run(std::vector<std::string> more) {
  std::vector<std::string> args{"redis",      "--redis", TestRedis::shared().tcp_url(),
                                "--strategy", "lua",     "-n",
                                "50",         "-p",      "10",
                                "-r",         "1",       "--seed",
                                "7"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++count;
  return count;
}

// The table row a check's status makes: "| `limit` | ✅ pass |".
std::string row_start(const json& check) {
  const std::string status = check.at("status");
  const bool warning = check.value("warning", false);
  const std::string shown = status == "fail"   ? "❌ fail"
                            : status == "skip" ? "⏭ skip"
                            : warning          ? "⚠️ warning"
                                               : "✅ pass";
  return "| `" + check.at("id").get<std::string>() + "` | " + shown + " | ";
}

RunOptions without_step_summary() {
  RunOptions options;
  options.unset_env.push_back("GITHUB_STEP_SUMMARY");
  return options;
}

}  // namespace

TEST_CASE("--summary-md FILE: a table row per check with its status, the verdict in the title") {
  ScratchDir dir("rlcheck-summary");
  const std::string file = dir.path() + "/summary.md";
  const std::string report_file = dir.path() + "/report.json";
  const ProcessOutcome outcome = run_rlcheck(
      lua_run({"--summary-md", file, "--report", report_file, "-q"}), without_step_summary());
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  const std::string summary = read_file(file);
  INFO(summary);
  CHECK(summary.starts_with("## ✅ rlcheck redis: PASS\n\n### ✅ sliding-window: PASS\n"));
  CHECK(summary.find("| check | status | detail |\n| --- | --- | --- |\n") != std::string::npos);
  const json report = json::parse(read_file(report_file));
  REQUIRE(report.at("checks").size() >= 10);
  for (const json& check : report.at("checks")) {
    CAPTURE(check.dump());
    CHECK(count_of(summary, row_start(check)) == 1);
  }
  CHECK(count_of(summary, "\n| `") == report.at("checks").size());
  CHECK(summary.find("⏭ skip") != std::string::npos);  // exact, without --exact
  CHECK(summary.find("Failures") == std::string::npos);
}

TEST_CASE("--summary-md: a failure in full, rlcheck explain and the command that reproduces it") {
  ScratchDir dir("rlcheck-summary");
  const std::string file = dir.path() + "/summary.md";
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--strategy", "naive", "-r",
                   "1", "--summary-md", file, "-q"},
                  without_step_summary());
  CHECK(outcome.exit_code == 1);
  const std::string summary = read_file(file);
  INFO(summary);
  CHECK(summary.starts_with("## ❌ rlcheck redis: FAIL\n"));
  CHECK(summary.find("| `limit` | ❌ fail | ") != std::string::npos);
  CHECK(summary.find("### Failures\n\n#### naive\n\n**`limit`** ❌ (what it means: `rlcheck "
                     "explain limit`)\n\n> 1 of 1 run over the limit") != std::string::npos);
  CHECK(summary.find("Reproduce:\n\n```sh\n" + rlcheck_binary() + " redis --redis ") !=
        std::string::npos);
  CHECK(summary.find(" --strategy naive -r 1 --summary-md " + file + " -q\n```\n") !=
        std::string::npos);
}

TEST_CASE("--summary-md auto appends to $GITHUB_STEP_SUMMARY; without it, writes nothing") {
  ScratchDir dir("rlcheck-summary");
  const std::string step_summary = dir.write("step_summary.md", "# Earlier step\n\n");
  RunOptions github;
  github.env["GITHUB_STEP_SUMMARY"] = step_summary;
  for (int i = 0; i < 2; ++i) {
    const ProcessOutcome outcome = run_rlcheck(lua_run({"--summary-md", "auto", "-q"}), github);
    INFO("stderr: " << outcome.err);
    CHECK(outcome.exit_code == 0);
  }
  const std::string appended = read_file(step_summary);
  INFO(appended);
  CHECK(appended.starts_with("# Earlier step\n\n## ✅ rlcheck redis: PASS\n"));
  CHECK(count_of(appended, "## ✅ rlcheck redis: PASS\n") == 2);
  CHECK(count_of(appended, "| `limit` | ✅ pass | ") == 2);

  // Outside GitHub Actions: nothing written anywhere, and the run goes as without the flag.
  RunOptions elsewhere = without_step_summary();
  elsewhere.cwd = dir.path() + "/empty";
  std::filesystem::create_directory(elsewhere.cwd);
  const ProcessOutcome outcome = run_rlcheck(lua_run({"--summary-md", "auto", "-q"}), elsewhere);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.err.empty());
  CHECK(outcome.out == "PASS\n");
  CHECK(std::filesystem::is_empty(elsewhere.cwd));
  CHECK(read_file(step_summary) == appended);
}

TEST_CASE("--summary-md that cannot be written is exit 3 before the run") {
  const ProcessOutcome outcome = run_rlcheck(
      lua_run({"--summary-md", "/nonexistent-rlcheck-dir/summary.md"}), without_step_summary());
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err ==
        "rlcheck: --summary-md: cannot write /nonexistent-rlcheck-dir/summary.md: No such file "
        "or directory\n");
  CHECK(outcome.out.empty());

  RunOptions github;
  github.env["GITHUB_STEP_SUMMARY"] = "/nonexistent-rlcheck-dir/step_summary.md";
  const ProcessOutcome appended = run_rlcheck(lua_run({"--summary-md", "auto"}), github);
  CHECK(appended.exit_code == 3);
  CHECK(appended.err.find("--summary-md: cannot write /nonexistent-rlcheck-dir/step_summary.md") !=
        std::string::npos);
}
