// The recipes of docs/ci.md that can run here: the git pre-push hook and the Claude Code settings.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "process/child_process.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;

namespace {

struct Repositories {
  std::filesystem::path root;
  std::string git;
  Repositories() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rlcheck-git-XXXXXX").string();
    root = mkdtemp(pattern.data());
    git = *rlcheck::process::find_on_path("git");
  }
  ~Repositories() { std::filesystem::remove_all(root); }

  ProcessOutcome run(const std::vector<std::string>& args, const RunOptions& options = {}) const {
    std::vector<std::string> argv{git, "-C", (root / "work").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, options);
  }
};

// A work repository whose pre-push hook is the one in contrib/, with one scenario, and a bare
// remote to push to.
void set_up(const Repositories& repos, const std::string& scenario) {
  REQUIRE(run_process({repos.git, "init", "-q", "--bare", (repos.root / "remote.git").string()})
              .exit_code == 0);
  REQUIRE(run_process({repos.git, "init", "-q", (repos.root / "work").string()}).exit_code == 0);
  std::filesystem::create_directories(repos.root / "work" / "scenarios");
  std::ofstream(repos.root / "work" / "scenarios" / "limiter.json") << scenario;
  std::filesystem::copy_file(std::string(RLCHECK_SOURCE_DIR) + "/contrib/git-hooks/pre-push",
                             repos.root / "work" / ".git" / "hooks" / "pre-push");
  REQUIRE(repos.run({"-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "add", "."})
              .exit_code == 0);
  REQUIRE(repos
              .run({"-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "commit", "-q",
                    "-m", "limiter"})
              .exit_code == 0);
}

RunOptions hook_environment() {
  RunOptions options;
  options.env["RLCHECK"] = RLCHECK_BINARY;
  options.env["REDIS_URL"] = TestRedis::shared().tcp_url() + "/3";
  return options;
}

}  // namespace

TEST_CASE("the pre-push hook refuses a push when the limiter breaks its contract") {
  Repositories repos;
  set_up(repos, R"({"name": "limiter holds", "strategy": "naive", "runs": 2, "expect": "pass"})");
  const ProcessOutcome push = repos.run(
      {"push", "-q", (repos.root / "remote.git").string(), "HEAD:main"}, hook_environment());
  CHECK(push.exit_code != 0);
  CHECK(push.err.find("pre-push: the rate limiter check failed") != std::string::npos);
  CHECK(push.err.find("failed to push") != std::string::npos);
}

TEST_CASE("the pre-push hook lets a push through when the limiter holds") {
  Repositories repos;
  set_up(repos, R"({"name": "limiter holds", "strategy": "lua", "runs": 2, "expect": "pass"})");
  const ProcessOutcome push = repos.run(
      {"push", "-q", (repos.root / "remote.git").string(), "HEAD:main"}, hook_environment());
  INFO(push.err);
  CHECK(push.exit_code == 0);
}

TEST_CASE("docs/ci.md's Stop-hook settings run a check that blocks a naive limiter") {
  // The block from README.md, with the strategy swapped for the one under test.
  const auto settings = nlohmann::json::parse(
      R"({"hooks":{"Stop":[{"hooks":[{"type":"command","command":"rlcheck redis --strategy lua -n 200 -p 50 --hook","timeout":168}]}]}})");
  std::string command = settings["hooks"]["Stop"][0]["hooks"][0]["command"];
  CHECK(command.rfind("rlcheck redis", 0) == 0);
  command.replace(command.find("lua"), 3, "naive");
  std::vector<std::string> args;
  std::istringstream words(command.substr(command.find(' ') + 1));
  for (std::string word; words >> word;)
    args.push_back(word);
  RunOptions options;
  options.env["REDIS_URL"] = TestRedis::shared().tcp_url() + "/3";
  options.stdin_mode = StdinMode::text;
  options.stdin_text = R"({"hook_event_name":"Stop","stop_hook_active":true})";
  const ProcessOutcome blocked = run_rlcheck(args, options);
  CHECK(blocked.exit_code == 2);
  CHECK(blocked.out.empty());
  CHECK(blocked.err.find("broke its contract") != std::string::npos);
}

TEST_CASE("hook-config, where rlcheck is not on PATH, writes a command the hook's shell runs") {
  RunOptions options;
  options.env["PATH"] = "/usr/bin:/bin";  // the build directory is not on it
  const ProcessOutcome printed = run_rlcheck(
      {"hook-config", "--", "redis", "--strategy", "lua", "-n", "100", "-p", "50", "-r", "2"},
      options);
  REQUIRE(printed.exit_code == 0);
  CHECK(printed.err.find("the command starts with this one's path, /") != std::string::npos);
  const auto settings = nlohmann::json::parse(printed.out);
  const std::string command = settings["hooks"]["Stop"][0]["hooks"][0]["command"];
  REQUIRE(command.front() == '/');
  CHECK(std::filesystem::equivalent(command.substr(0, command.find(' ')), rlcheck_binary()));

  // As Claude Code runs it: through a shell, with the hook's JSON on stdin.
  RunOptions hook = options;
  hook.env["REDIS_URL"] = TestRedis::shared().tcp_url() + "/3";
  hook.stdin_mode = StdinMode::text;
  hook.stdin_text = R"({"hook_event_name":"Stop","stop_hook_active":false})";
  const ProcessOutcome passed = run_process({"/bin/sh", "-c", command}, hook);
  CHECK(passed.exit_code == 0);
  CHECK(passed.err.empty());
  std::string naive = command;
  naive.replace(naive.find(" lua "), 5, " naive ");
  const ProcessOutcome blocked = run_process({"/bin/sh", "-c", naive}, hook);
  CHECK(blocked.exit_code == 2);  // blocks the stop; 127 (not found) would not
  CHECK(blocked.err.find("broke its contract") != std::string::npos);
}
