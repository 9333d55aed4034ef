// Outputs and limits: report paths that cannot be written are exit 3 before any load is sent;
// reports replace a file already there only whole (nothing left behind, nothing truncated by a
// run that never reported); a closed stdout pipe is not a crash; -p beyond the descriptor limit
// raises the soft limit or exits 64 naming it; 10 000 connections to Redis and to `rlcheck
// serve` work where the hard limit allows them.

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/fake_http_server.hpp"
#include "support/json_outcome.hpp"
#include "support/private_redis.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"

using namespace rlcheck::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> k_small{"-n", "4", "-p", "2", "--runs", "1", "--limit", "10"};

std::vector<std::string> http_args(const FakeHttpServer& server, std::vector<std::string> more) {
  std::vector<std::string> args{"http", server.url()};
  args.insert(args.end(), k_small.begin(), k_small.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh, empty directory for one test's files.
fs::path scratch_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("rlcheck-outputs-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Runs rlcheck with its stdout on a pipe whose read end is already closed: every write to
// stdout fails with EPIPE (and would raise SIGPIPE). Returns the exit code (128 + signal).
int run_with_closed_stdout(const std::vector<std::string>& args) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  close(pipe_fds[0]);
  std::vector<std::string> argv{RLCHECK_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& arg : argv)
    raw.push_back(arg.data());
  raw.push_back(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    execv(raw[0], raw.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

rlimit descriptor_limit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit;
}

}  // namespace

TEST_CASE("outputs: a report path that cannot be written is exit 3 before any request") {
  for (const std::string flag : {"--report", "--junit", "--html", "--records"}) {
    CAPTURE(flag);
    FakeHttpServer server(FakeHttpServer::Mode::reply);
    const ProcessOutcome outcome =
        run_rlcheck(http_args(server, {flag, "/nonexistent-rlcheck-dir/out.file"}));
    INFO(outcome.err);
    CHECK(outcome.exit_code == 3);
    CHECK(outcome.err.find(flag + ": cannot write /nonexistent-rlcheck-dir/out.file: No such "
                                  "file or directory") != std::string::npos);
    CHECK(server.requests().empty());
  }
}

TEST_CASE("outputs: rlcheck run checks its report paths before the first scenario") {
  const std::string scenario =
      std::string(RLCHECK_SOURCE_DIR) + "/scenarios/atomic-strategies.json";
  const ProcessOutcome outcome =
      run_rlcheck({"run", scenario, "--junit", "/nonexistent-rlcheck-dir/suite.xml"});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("--junit: cannot write /nonexistent-rlcheck-dir/suite.xml: No such file "
                         "or directory") != std::string::npos);
  CHECK(outcome.out.empty());  // no scenario ran
}

TEST_CASE("outputs: a directory given as a report path is exit 3 before any request") {
  const fs::path dir = scratch_dir("isdir");
  FakeHttpServer server(FakeHttpServer::Mode::reply);
  const ProcessOutcome outcome = run_rlcheck(http_args(server, {"--junit", dir.string()}));
  INFO(outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("Is a directory") != std::string::npos);
  CHECK(server.requests().empty());
  fs::remove_all(dir);
}

TEST_CASE("outputs: reports replace files already there whole, and leave nothing beside them") {
  const fs::path dir = scratch_dir("replace");
  for (const char* name : {"r.json", "r.xml", "r.html", "r.csv"})
    std::ofstream(dir / name) << "precious";
  FakeHttpServer server(FakeHttpServer::Mode::reply);
  const ProcessOutcome outcome = run_rlcheck(http_args(
      server, {"--report", (dir / "r.json").string(), "--junit", (dir / "r.xml").string(), "--html",
               (dir / "r.html").string(), "--records", (dir / "r.csv").string()}));
  INFO(outcome.err);
  CHECK(outcome.exit_code == 0);
  CHECK(names_in(dir) == std::vector<std::string>{"r.csv", "r.html", "r.json", "r.xml"});
  CHECK(json::parse(read_file(dir / "r.json"))["verdict"] == "pass");
  CHECK(read_file(dir / "r.xml").starts_with("<?xml"));
  CHECK(read_file(dir / "r.html").find("</html>") != std::string::npos);
  CHECK(lines_of(read_file(dir / "r.csv")).size() == 5);  // a header and 4 requests
  fs::remove_all(dir);
}

TEST_CASE("outputs: a device as a report path is written in place (--report /dev/stdout)") {
  FakeHttpServer server(FakeHttpServer::Mode::reply);
  const ProcessOutcome outcome = run_rlcheck(
      http_args(server, {"--quiet", "--report", "/dev/stdout", "--junit", "/dev/null"}));
  INFO(outcome.err);
  CHECK(outcome.exit_code == 0);
  const size_t brace = outcome.out.find('{');
  REQUIRE(brace != std::string::npos);
  const json report =
      json::parse(outcome.out.substr(brace, outcome.out.rfind('}') - brace + 1), nullptr, false);
  REQUIRE_FALSE(report.is_discarded());
  CHECK(report["verdict"] == "pass");
}

TEST_CASE("outputs: a run that never reports leaves the files already there untouched") {
  const fs::path dir = scratch_dir("untouched");
  std::ofstream(dir / "r.csv") << "precious";
  std::ofstream(dir / "r.json") << "precious";
  // Nothing listens there: the set-up fails (exit 3) after --records was opened.
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", "redis://127.0.0.1:1", "--strategy", "naive", "-n", "4",
                   "--records", (dir / "r.csv").string(), "--report", (dir / "r.json").string()});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(read_file(dir / "r.csv") == "precious");
  CHECK(read_file(dir / "r.json") == "precious");
  CHECK(names_in(dir) == std::vector<std::string>{"r.csv", "r.json"});
  fs::remove_all(dir);
}

TEST_CASE("outputs: a closed stdout pipe is no crash: files written, the verdict's exit code") {
  const fs::path dir = scratch_dir("pipe");
  FakeHttpServer server(FakeHttpServer::Mode::reply);
  const std::vector<std::string> args = http_args(server, {"--report", (dir / "r.json").string()});
  const ProcessOutcome intact = run_rlcheck(args);
  REQUIRE(intact.exit_code == 0);
  fs::remove(dir / "r.json");
  CHECK(run_with_closed_stdout(args) == intact.exit_code);
  CHECK(json::parse(read_file(dir / "r.json"))["verdict"] == "pass");
  // The same for a failing verdict (naive goes over the limit).
  FakeHttpServer refusing(FakeHttpServer::Mode::reply, FakeHttpServer::Response{503, {}, ""});
  const std::vector<std::string> failing = http_args(refusing, {"--json"});
  const ProcessOutcome failing_intact = run_rlcheck(failing);
  CHECK(run_with_closed_stdout(failing) == failing_intact.exit_code);
  fs::remove_all(dir);
}

TEST_CASE("limits: -p beyond the hard descriptor limit is exit 64 naming the limit") {
  FakeHttpServer server(FakeHttpServer::Mode::reply);
  // Started with soft and hard limits of 1000: -p 5000 cannot have its descriptors.
  const ProcessOutcome outcome =
      run_process({"/bin/sh", "-c", "ulimit -n 1000 && exec \"$0\" \"$@\"", RLCHECK_BINARY, "http",
                   server.url(), "-p", "5000", "-n", "1"});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 64);
  CHECK(outcome.err.find("-p 5000 needs ~5050 file descriptors; the limit is 1000 (soft) / 1000 "
                         "(hard)") != std::string::npos);
  CHECK(server.requests().empty());
}

TEST_CASE("limits: -p above a low soft descriptor limit raises it") {
  const rlimit limit = descriptor_limit();
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < 600) {
    MESSAGE("skipped: the hard descriptor limit " << limit.rlim_max << " is below 600");
    return;
  }
  FakeHttpServer server(FakeHttpServer::Mode::reply);
  // Started with a soft limit of 128: 300 connections only fit once rlcheck raised it.
  const ProcessOutcome outcome = run_process(
      {"/bin/sh", "-c", "ulimit -Sn 128 && exec \"$0\" \"$@\"", RLCHECK_BINARY, "http",
       server.url(), "-p", "300", "-n", "300", "--runs", "1", "--limit", "1000", "--json"});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 0);
  const json report = json::parse(outcome.out, nullptr, false);
  REQUIRE_FALSE(report.is_discarded());
  CHECK(report["runs"][0]["error_kinds"].empty());
}

TEST_CASE("limits: 10 000 connections to Redis and to rlcheck serve") {
  constexpr int k_connections = 10'000;
  const rlimit limit = descriptor_limit();
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < k_connections + 200) {
    MESSAGE("skipped: 10 000 connections need a hard descriptor limit of ~"
            << k_connections + 200 << " per process; it is " << limit.rlim_max << " (ulimit -Hn)");
    return;
  }
  PrivateRedis redis;
  {
    auto control = redis.connect();
    REQUIRE(control.has_value());
    auto set = control->call({"CONFIG", "SET", "maxclients", "10200"});
    REQUIRE(set.has_value());
  }
  const std::string count = std::to_string(k_connections);
  RunOptions options;
  options.limit = std::chrono::seconds(120);

  // Runs rlcheck with every connection open at once; every request must be decided.
  const auto expect_all_decided = [&](const std::string& what, std::vector<std::string> args) {
    for (const char* common : {"-p", "-n"})
      args.insert(args.end(), {common, count});
    args.insert(args.end(), {"--runs", "1", "--limit", "100000", "--window", "60s", "--timeout",
                             "30s", "--json"});
    const auto started = std::chrono::steady_clock::now();
    const ProcessOutcome outcome = run_rlcheck(args, options);
    MESSAGE(
        what << " -p 10000 -n 10000 took "
             << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()
             << " s");
    INFO(outcome.err);
    REQUIRE_FALSE(outcome.timed_out);
    CHECK(outcome.exit_code == 0);
    const json report = json::parse(outcome.out, nullptr, false);
    REQUIRE_FALSE(report.is_discarded());
    CHECK(report["runs"][0]["error_kinds"].empty());
  };

  SUBCASE("redis") {
    expect_all_decided("rlcheck redis",
                       {"redis", "--redis", redis.tcp_url(), "--strategy", "incr-expire"});
  }
  SUBCASE("serve") {
    ServeProcess serve({"--redis", redis.tcp_url(), "--strategy", "incr-expire", "--limit",
                        "100000", "--window", "60s", "--listen", "127.0.0.1:0"});
    expect_all_decided("rlcheck http against rlcheck serve", {"http", serve.url()});
  }
}
