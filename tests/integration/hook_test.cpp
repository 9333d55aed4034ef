// --hook as Claude Code runs it: Stop-hook JSON (or nothing) on stdin, exit 2 and a reason on
// stderr to block the stop, silence and exit 0 to let it go.

#include <doctest/doctest.h>

#include <filesystem>

#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;

namespace {

const char* const k_stop_input =
    R"({"session_id":"abc123","transcript_path":"/tmp/t.jsonl","cwd":"/work",)"
    R"("hook_event_name":"Stop","stop_hook_active":false})";

RunOptions with_stdin(StdinMode mode, std::string text = {}) {
  RunOptions options;
  options.stdin_mode = mode;
  options.stdin_text = std::move(text);
  return options;
}

// A private directory, removed at the end.
struct TempDirectory {
  std::string path;
  TempDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rlcheck-hook-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDirectory() { std::filesystem::remove_all(path); }
};

// The program as the reproduce line names it: the path the test started it by, made absolute.
std::string program_path() {
  return std::filesystem::absolute(rlcheck_binary()).lexically_normal().string();
}

}  // namespace

TEST_CASE("a failing check blocks the stop: exit 2, nothing on stdout, the reason on stderr") {
  const std::string url = TestRedis::shared().tcp_url();
  const std::string program = program_path();
  const std::vector<RunOptions> inputs{with_stdin(StdinMode::text, k_stop_input),
                                       with_stdin(StdinMode::empty), with_stdin(StdinMode::closed),
                                       with_stdin(StdinMode::text, "not json {{{")};
  for (const RunOptions& input : inputs) {
    const ProcessOutcome outcome = run_rlcheck(
        {"redis", "--redis", url, "--strategy", "naive", "-n", "200", "-p", "50", "--hook"}, input);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.out.empty());
    CHECK(outcome.err.find("limit:") != std::string::npos);
    CHECK(outcome.err.find("runs over the limit") != std::string::npos);
    const std::string args = " redis --redis " + url + " --strategy naive -n 200 -p 50\n";
    CHECK(outcome.err.find("reproduce: " + program + args) != std::string::npos);
    CHECK(lines_of(outcome.err).size() <= 6);
  }
}

TEST_CASE("the reproduce line runs as pasted, by the path the hook started rlcheck by") {
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--strategy", "naive", "-n",
                   "200", "-p", "50", "--hook"},
                  with_stdin(StdinMode::empty));
  REQUIRE(outcome.exit_code == 2);
  const std::string marker = "reproduce: ";
  const size_t at = outcome.err.find(marker);
  REQUIRE(at != std::string::npos);
  const std::string line =
      outcome.err.substr(at + marker.size(), outcome.err.find('\n', at) - at - marker.size());
  CHECK(line.rfind(program_path() + " ", 0) == 0);
  // From another directory, with a PATH that finds no rlcheck: the same verdict, exit 1.
  RunOptions elsewhere;
  elsewhere.cwd = "/";
  elsewhere.env["PATH"] = "/usr/bin:/bin";
  const ProcessOutcome pasted = run_process({"/bin/sh", "-c", line + " -q"}, elsewhere);
  CHECK(pasted.exit_code == 1);
}

TEST_CASE("a passing check lets the stop go silently") {
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "--strategy", "lua", "-n",
                   "200", "-p", "50", "--hook"},
                  with_stdin(StdinMode::text, k_stop_input));
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.out.empty());
  CHECK(outcome.err.empty());
}

TEST_CASE("a test that cannot run blocks too, saying what was tried") {
  const ProcessOutcome outcome = run_rlcheck({"redis", "--redis", "redis://127.0.0.1:1", "--hook"},
                                             with_stdin(StdinMode::empty));
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.out.empty());
  CHECK(outcome.err.find("redis://127.0.0.1:1") != std::string::npos);
  CHECK(outcome.err.find("reproduce:") != std::string::npos);
}

TEST_CASE("--hook-max-blocks: past the cap a failing check lets the stop go, with a note") {
  const std::vector<std::string> naive{
      "redis", "--redis", TestRedis::shared().tcp_url(), "--strategy", "naive", "-n", "200", "-p",
      "50",    "--hook"};
  const std::string continuing = R"({"stop_hook_active": true})";
  std::vector<std::string> capped = naive;
  capped.insert(capped.end(), {"--hook-max-blocks", "1"});
  const ProcessOutcome let_go = run_rlcheck(capped, with_stdin(StdinMode::text, continuing));
  CHECK(let_go.exit_code == 0);
  CHECK(let_go.out.empty());
  CHECK(let_go.err.find("not blocking this stop") != std::string::npos);
  CHECK(let_go.err.find("--hook-max-blocks 1") != std::string::npos);
  CHECK(let_go.err.find("limit:") != std::string::npos);  // the last failure, named
  // The first stop of a chain still blocks under the cap; without the cap every stop does.
  CHECK(run_rlcheck(capped, with_stdin(StdinMode::text, k_stop_input)).exit_code == 2);
  CHECK(run_rlcheck(naive, with_stdin(StdinMode::text, continuing)).exit_code == 2);
}

TEST_CASE("--hook-max-blocks counts the blocks of one session between stops") {
  TempDirectory state;
  RunOptions options = with_stdin(StdinMode::text);
  options.env["XDG_RUNTIME_DIR"] = state.path;
  const std::vector<std::string> args{
      "redis", "--redis", TestRedis::shared().tcp_url(), "--strategy", "naive", "-n", "200", "-p",
      "50",    "--hook",  "--hook-max-blocks",           "2"};
  const auto stop = [&](bool active) {
    options.stdin_text =
        std::string(R"({"session_id":"s-42","stop_hook_active":)") + (active ? "true}" : "false}");
    return run_rlcheck(args, options).exit_code;
  };
  CHECK(stop(false) == 2);
  CHECK(stop(true) == 2);
  CHECK(stop(true) == 0);
}

TEST_CASE("hook-config writes a timeout that covers the planned runs, and refuses an unknown one") {
  const ProcessOutcome printed =
      run_rlcheck({"hook-config", "--", "redis", "--rate", "10/s", "--duration", "2m", "-r", "1"},
                  with_rlcheck_on_path());
  REQUIRE(printed.exit_code == 0);
  const auto settings = nlohmann::json::parse(printed.out);
  const auto& hook = settings["hooks"]["Stop"][0]["hooks"][0];
  REQUIRE(hook.contains("timeout"));
  CHECK(hook["timeout"].get<int64_t>() >= 120 + 30);

  const ProcessOutcome refused = run_rlcheck(
      {"hook-config", "--", "http", "http://127.0.0.1:1/", "-n", "20", "--verify-retry-after"});
  CHECK(refused.exit_code == 64);
  CHECK(refused.out.empty());
  CHECK(lines_of(refused.err).size() == 1);
  CHECK(refused.err.find("--verify-retry-after") != std::string::npos);
}
