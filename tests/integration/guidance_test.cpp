// Messages that name the cause (did you mean, whole Redis errors) and a command line that
// protects the user from what would silently go wrong (a flag taken as a file name, a hook
// that cannot run, a key shared by runs, settings reordered, paths resolved elsewhere).

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "rlcheck-guidance-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((path / name).parent_path());
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

RunOptions on_test_redis() {
  RunOptions options;
  options.env["REDIS_URL"] = TestRedis::shared().tcp_url() + "/4";
  return options;
}

void check_one_usage_line(const ProcessOutcome& outcome) {
  CAPTURE(outcome.err);
  CHECK(outcome.exit_code == 64);
  CHECK(outcome.out.empty());
  CHECK(lines_of(outcome.err).size() == 1);
}

}  // namespace

TEST_CASE("a mistyped flag gets the flag it meant, in one line") {
  const ProcessOutcome outcome = run_rlcheck({"redis", "--concurency", "10"}, on_test_redis());
  check_one_usage_line(outcome);
  CHECK(outcome.err ==
        "rlcheck: --concurency: unknown option of rlcheck redis; did you mean "
        "--concurrency?\n");
}

TEST_CASE("a mistyped command gets the command it meant") {
  const ProcessOutcome outcome = run_rlcheck({"reds", "-n", "10"});
  check_one_usage_line(outcome);
  CHECK(outcome.err.find("reds: unknown command; did you mean redis?") != std::string::npos);
}

TEST_CASE("a flag where a file name belongs is refused, and no file is written") {
  const std::filesystem::path stray = std::filesystem::current_path() / "-q";
  std::filesystem::remove(stray);
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "-n", "20", "-r", "1", "--html", "-q"}, on_test_redis());
  check_one_usage_line(outcome);
  CHECK(outcome.err == "rlcheck: --html: expected a file name, got the flag -q\n");
  CHECK_FALSE(std::filesystem::exists(stray));
}

TEST_CASE("hook-config refuses a wrapped command that would fail at every stop") {
  const ProcessOutcome outcome = run_rlcheck({"hook-config", "--", "redis", "--strategy", "bogus"});
  check_one_usage_line(outcome);
  // The message the hook itself would print.
  const ProcessOutcome direct = run_rlcheck({"redis", "--strategy", "bogus", "--hook"});
  CHECK(direct.exit_code == 64);
  CHECK(outcome.err == direct.err);
  CHECK(outcome.err.find("--strategy: unknown strategy 'bogus'") != std::string::npos);

  TempDir dir;
  const std::string settings = dir.write("settings.json", "{\"model\": \"opus\"}\n");
  const ProcessOutcome merged =
      run_rlcheck({"hook-config", "--merge", settings, "--", "redis", "--concurency", "5"});
  check_one_usage_line(merged);
  CHECK(merged.err.find("did you mean --concurrency?") != std::string::npos);
  // --json cannot go with the --hook the block adds.
  check_one_usage_line(run_rlcheck({"hook-config", "--", "redis", "--json"}));
  // A suite's scenario files are read as rlcheck run reads them.
  const std::string bad = dir.write("bad.json", R"({"reqests": 5})");
  const ProcessOutcome suite = run_rlcheck({"hook-config", "--", "run", bad});
  check_one_usage_line(suite);
  CHECK(suite.err.find("did you mean 'requests'?") != std::string::npos);
}

TEST_CASE("hook-config --merge keeps the user's keys in order, and their indentation") {
  TempDir dir;
  const std::string original = R"json({
  "theme": "dark",
  "permissions": {
    "allow": [
      "Bash(make:*)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": []
      }
    ]
  },
  "apiKeyHelper": "/bin/key",
  "env": {
    "ZED": "1",
    "ALPHA": "2"
  }
}
)json";
  const std::string settings = dir.write("settings.json", original);
  const ProcessOutcome merged =
      run_rlcheck({"hook-config", "--merge", settings, "--", "redis", "--strategy", "lua"},
                  with_rlcheck_on_path());
  INFO(merged.err);
  REQUIRE(merged.exit_code == 0);
  // Everything the user wrote comes back as written, the Stop hook added after PreToolUse.
  const std::string before_hooks_end = original.substr(0, original.find("\n  },\n  \"apiKey"));
  CHECK(merged.out.starts_with(before_hooks_end + ",\n    \"Stop\": ["));
  CHECK(merged.out.ends_with(original.substr(original.find("\n  },\n  \"apiKey"))));
  const auto result = nlohmann::ordered_json::parse(merged.out);
  CHECK(result["hooks"]["Stop"][0]["hooks"][0]["command"] == "rlcheck redis --strategy lua --hook");
}

TEST_CASE("a scenario's script is found beside the scenario, wherever rlcheck runs") {
  TempDir dir;
  dir.write("limiters/deny_all.lua", "return 0\n");
  const std::string file =
      dir.write("limiters/deny.json", R"({"name": "deny everything", "script": "deny_all.lua",
          "requests": 20, "concurrency": 5, "runs": 1, "expect": "fail"})");
  // The test runs in the build folder, not in the scenario's.
  REQUIRE_FALSE(std::filesystem::exists("deny_all.lua"));
  const ProcessOutcome outcome = run_rlcheck({"run", file, "--json"}, on_test_redis());
  INFO(outcome.err);
  CHECK(outcome.exit_code == 0);
  const json suite = json::parse(outcome.out);
  CHECK(suite["scenarios"][0]["ok"] == true);
  const std::string command = suite["scenarios"][0]["command"];
  CHECK(command.find((dir.path / "limiters" / "deny_all.lua").string()) != std::string::npos);
}

TEST_CASE("rlcheck run reports every bad key of every file before running anything") {
  TempDir dir;
  const std::string first =
      dir.write("a.json", R"({"name": "a", "reqests": 200, "concurency": 5})");
  const std::string second = dir.write("b.json", R"({"name": "b", "windw": "1s"})");
  const std::string good = dir.write("c.json", R"({"name": "c", "strategy": "naive"})");
  const ProcessOutcome outcome = run_rlcheck({"run", first, second, good}, on_test_redis());
  INFO(outcome.err);
  CHECK(outcome.exit_code == 64);
  CHECK(outcome.out.empty());
  const auto lines = lines_of(outcome.err);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] ==
        "rlcheck: " + first + ": unknown key 'concurency'; did you mean 'concurrency'?");
  CHECK(lines[1] == "rlcheck: " + first + ": unknown key 'reqests'; did you mean 'requests'?");
  CHECK(lines[2] == "rlcheck: " + second + ": unknown key 'windw'; did you mean 'window'?");
}

TEST_CASE("rlcheck run -q prints one line per scenario") {
  TempDir dir;
  const std::string holds = dir.write(
      "holds.json", R"({"name": "lua holds", "strategy": "lua", "runs": 1, "expect": "pass"})");
  const std::string breaks =
      dir.write("breaks.json",
                R"({"name": "naive holds", "strategy": "naive", "runs": 1, "expect": "pass"})");
  const ProcessOutcome outcome = run_rlcheck({"run", holds, breaks, "-q"}, on_test_redis());
  CHECK(outcome.exit_code == 1);
  const auto lines = lines_of(outcome.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find("lua holds: expected pass, got pass") != std::string::npos);
  CHECK(lines[1].find("naive holds: expected pass, got fail: FAIL: limit:") != std::string::npos);
}

TEST_CASE("a Lua script that does not compile shows Redis's whole error") {
  const std::string script = fixture("syntax_error.lua");
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--script", script});
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("...") == std::string::npos);
  // The line and the token come last in Redis's message.
  CHECK(outcome.err.find("user_script:2: unexpected symbol near '='\"") != std::string::npos);
}

TEST_CASE("a long run-time script error reaches stderr and the JSON whole") {
  const std::string script = fixture("raises_long_error.lua");
  const ProcessOutcome outcome = run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(),
                                              "--script", script, "-n", "5", "-r", "1", "--json"});
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("no window can be computed; END-OF-MESSAGE") != std::string::npos);
  const json report = json::parse(outcome.out);
  const std::string sample = report["runs"][0]["error_samples"]["server-error"];
  CHECK(sample.find("END-OF-MESSAGE") != std::string::npos);
}

TEST_CASE("an explicit --key over several runs without --reset is refused, saying why") {
  const std::string url = TestRedis::shared().tcp_url();
  const ProcessOutcome refused =
      run_rlcheck({"redis", "--redis", url + "/4", "-k", "guidance:shared", "-r", "2"});
  check_one_usage_line(refused);
  CHECK(refused.err.find("--runs") != std::string::npos);
  CHECK(refused.err.find("--reset") != std::string::npos);
  CHECK(refused.err.find("first run's state") != std::string::npos);

  CHECK(run_rlcheck({"redis", "--redis", url + "/4", "-k", "guidance:one", "-r", "1", "-q"})
            .exit_code == 0);
  CHECK(run_rlcheck(
            {"redis", "--redis", url + "/4", "-k", "guidance:reset", "--reset", "-r", "2", "-q"})
            .exit_code == 0);
}

TEST_CASE("one run and one request are counted in the singular") {
  const ProcessOutcome outcome = run_rlcheck(
      {"redis", "--redis", TestRedis::shared().tcp_url(), "-n", "1", "-p", "1", "-r", "1"});
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.out.find("1 request x 1 run, concurrency 1") != std::string::npos);
  CHECK(outcome.out.find("1 runs") == std::string::npos);
}
