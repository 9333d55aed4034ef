// Many hosts, one verdict: N rlcheck processes share one test through a coordinator Redis.
// The workers here are separate processes on this host; their coordinator is database 2 of the
// shared redis-server (other tests expect database 0 to hold no rlcheck:* keys, and session
// keys live an hour). Every test takes a session ID of its own. Each worker runs a heartbeat
// thread beside its load: two of the tests are in the "threads" suite, which the
// ThreadSanitizer pass runs.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string coordinator_url() {
  return TestRedis::shared().tcp_url() + "/2";
}

std::string new_session(const std::string& name) {
  static std::atomic<int> counter{0};
  return "test-" + name + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

std::vector<std::string> worker_args(std::vector<std::string> args, int workers, int index,
                                     const std::string& session) {
  for (const std::string& arg :
       {std::string("--workers"), std::to_string(workers), std::string("--worker-index"),
        std::to_string(index), std::string("--coordinator"), coordinator_url(),
        std::string("--session"), session}) {
    args.push_back(arg);
  }
  return args;
}

// Runs `workers` copies of `args` at once, one per index (those in `skip` never start).
std::vector<ProcessOutcome> run_workers(const std::vector<std::string>& args, int workers,
                                        const std::string& session,
                                        const std::vector<int>& skip = {},
                                        const RunOptions& options = {}) {
  std::vector<std::future<ProcessOutcome>> running;
  for (int index = 0; index < workers; ++index) {
    if (std::find(skip.begin(), skip.end(), index) != skip.end())
      continue;
    running.push_back(std::async(std::launch::async, [=] {
      return run_rlcheck(worker_args(args, workers, index, session), options);
    }));
  }
  std::vector<ProcessOutcome> outcomes;
  for (auto& outcome : running)
    outcomes.push_back(outcome.get());
  return outcomes;
}

json report_of(const ProcessOutcome& outcome) {
  INFO("exit " << outcome.exit_code << "\nstdout: " << outcome.out << "\nstderr: " << outcome.err);
  REQUIRE_FALSE(outcome.timed_out);
  REQUIRE_FALSE(outcome.out.empty());
  return json::parse(outcome.out);
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int64_t shipped_requests(const json& report) {
  int64_t total = 0;
  for (const json& worker : report.at("workers"))
    total += worker.at("requests").get<int64_t>();
  return total;
}

}  // namespace

TEST_CASE("many hosts: 3 workers on the Lua limiter allow exactly the limit, every run" *
          doctest::test_suite("threads")) {
  const std::string session = new_session("lua");
  const auto outcomes =
      run_workers({"redis", "--redis", TestRedis::shared().tcp_url(), "--strategy", "lua", "-n",
                   "150", "-p", "30", "-r", "2", "--json"},
                  3, session);
  const json report = report_of(outcomes.front());
  for (const ProcessOutcome& outcome : outcomes) {
    INFO(outcome.err);
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.out == outcomes.front().out);  // every worker prints worker 0's report
  }
  CHECK(report.at("verdict") == "pass");
  REQUIRE(report.at("runs").size() == 2);
  for (const json& run : report.at("runs"))
    CHECK(run.at("allowed") == 10);
  REQUIRE(report.at("workers").size() == 3);
  CHECK(shipped_requests(report) == 300);
  for (const json& worker : report.at("workers")) {
    CHECK(worker.at("requests") == 100);  // 50 of each run's 150
    CHECK(worker.at("clock_uncertainty_ms").get<double>() >= 0);
  }
  CHECK(report.at("session").at("id") == session);
}

TEST_CASE("many hosts: 3 workers catch the naive limiter") {
  const std::string session = new_session("naive");
  const auto outcomes =
      run_workers({"redis", "--redis", TestRedis::shared().tcp_url(), "--strategy", "naive", "-n",
                   "150", "-p", "60", "-r", "1", "--json"},
                  3, session);
  const json report = report_of(outcomes.front());
  for (const ProcessOutcome& outcome : outcomes)
    CHECK(outcome.exit_code == 1);
  CHECK(report.at("verdict") == "fail");
  CHECK(check_status(report, "limit") == "fail");
  CHECK(report.at("runs").at(0).at("allowed").get<int>() > 10);
}

TEST_CASE("many hosts: http workers against rlcheck serve hold it to its limit") {
  ServeProcess serve({"--redis", TestRedis::shared().tcp_url() + "/1", "--listen", "127.0.0.1:0",
                      "--strategy", "lua", "--limit", "10", "--window", "60s", "--identity-header",
                      "X-Client"});
  const std::string session = new_session("http");
  const auto outcomes =
      run_workers({"http", serve.url(), "-H", "X-Client: {id}-" + session, "--identities", "3",
                   "-n", "90", "-p", "9", "-r", "1", "--limit", "10", "--window", "60s", "--json"},
                  3, session);
  const json report = report_of(outcomes.front());
  for (const ProcessOutcome& outcome : outcomes)
    CHECK(outcome.exit_code == 0);
  CHECK(report.at("verdict") == "pass");
  CHECK(report.at("runs").at(0).at("allowed") == 30);  // 10 for each of 3 identities
  CHECK(shipped_requests(report) == 90);
}

TEST_CASE("many hosts: http workers catch rlcheck serve --strategy naive") {
  ServeProcess serve({"--redis", TestRedis::shared().tcp_url() + "/1", "--listen", "127.0.0.1:0",
                      "--strategy", "naive", "--limit", "10", "--window", "60s",
                      "--identity-header", "X-Client"});
  const std::string session = new_session("http-naive");
  const auto outcomes = run_workers({"http", serve.url(), "-H", "X-Client: {run}-" + session, "-n",
                                     "200", "-p", "48", "-r", "4", "--limit", "10", "--json"},
                                    3, session);
  const json report = report_of(outcomes.front());
  INFO("serve: " << serve.log());
  for (const ProcessOutcome& outcome : outcomes)
    CHECK(outcome.exit_code == 1);
  CHECK(report.at("verdict") == "fail");
  CHECK(check_status(report, "limit") == "fail");
  CHECK(report.at("summary").at("allowed").at("max").get<int>() > 10);
  CHECK(shipped_requests(report) == 800);
}

// The merged run is judged on the coordinator's clock: with 3 identities over 2 workers, each
// identity's requests leave from both, so its window audit and its hints' accuracy are judged
// over records from two processes. A correct limiter passes as it does alone, and a script
// whose retry_ms is half the wait (hundreds of milliseconds early) fails as it does alone.
TEST_CASE("many hosts: a merged open-model run is judged as one process's run of the same load") {
  const auto judged_alike = [](const std::vector<std::string>& limiter, int expected_exit) {
    std::vector<std::string> load{"redis", "--redis", TestRedis::shared().tcp_url()};
    load.insert(load.end(), limiter.begin(), limiter.end());
    load.insert(load.end(), {"--limit", "10", "--window", "1s", "--rate", "60/s", "--duration",
                             "2s", "--identities", "3", "-p", "8", "-r", "1", "--json"});
    const ProcessOutcome alone = run_rlcheck(load);
    const json single = report_of(alone);
    const auto outcomes = run_workers(load, 2, new_session("open"));
    const json merged = report_of(outcomes.front());
    CHECK(alone.exit_code == expected_exit);
    CHECK(outcomes.front().exit_code == expected_exit);
    CHECK(shipped_requests(merged) == 120);
    for (const char* id : {"limit", "contract", "retry-after-accuracy", "lockout", "errors"}) {
      INFO(id << ": alone " << single.dump() << "\nmerged " << merged.dump());
      CHECK(check_status(merged, id) == check_status(single, id));
    }
    return merged;
  };
  SUBCASE("the seed's sliding window passes") {
    const json merged = judged_alike({"--strategy", "lua"}, 0);
    CHECK(check_status(merged, "contract") == "pass");
    CHECK(check_status(merged, "retry-after-accuracy") == "pass");
  }
  SUBCASE("a hint of half the wait fails retry-after-accuracy") {
    const json merged = judged_alike({"--script", fixture("half_retry_hint.lua")}, 1);
    CHECK(check_status(merged, "contract") == "pass");
    CHECK(check_status(merged, "retry-after-accuracy") == "fail");
  }
}

TEST_CASE("many hosts: --stages with Poisson arrivals, every worker's share tallied per stage") {
  // Without --seed every worker draws the same arrivals from the session's name.
  const std::vector<std::string> load{"redis",
                                      "--redis",
                                      TestRedis::shared().tcp_url(),
                                      "--strategy",
                                      "lua",
                                      "--stages",
                                      "1s:100/s,1s:100/s",
                                      "--arrivals",
                                      "poisson",
                                      "-p",
                                      "8",
                                      "-r",
                                      "1",
                                      "--json"};
  const auto outcomes = run_workers(load, 2, new_session("stages"));
  const json merged = report_of(outcomes.front());
  CHECK(outcomes.front().exit_code == 0);
  CHECK(shipped_requests(merged) == 150);
  CHECK(merged["params"]["arrivals"] == "poisson");
  const json& run = merged["runs"][0];
  REQUIRE(run["stages"].size() == 2);
  CHECK(run["stages"][0]["sent"].get<int>() + run["stages"][1]["sent"].get<int>() == 150);
  for (const json& stage : run["stages"])
    CHECK(stage["sent"] == stage["planned"]);
  CHECK(run.contains("lateness_ms"));
  CHECK(check_status(merged, "contract") == "pass");
}

TEST_CASE("many hosts: a worker that never joins is named within the join timeout") {
  // Worker 0 of 2 alone: worker 1 never starts (one process, so none can merely start late).
  const std::string session = new_session("join");
  const auto outcomes = run_workers({"redis", "--redis", TestRedis::shared().tcp_url(), "-n", "30",
                                     "-p", "3", "-r", "1", "--join-timeout", "2s"},
                                    2, session, {1});
  REQUIRE(outcomes.size() == 1);
  INFO(outcomes.front().err);
  CHECK(outcomes.front().exit_code == 3);
  CHECK(outcomes.front().err.find("worker 1 did not join within 2s (joined: 0)") !=
        std::string::npos);
}

TEST_CASE("many hosts: workers running different tests are refused, naming the difference") {
  const std::string session = new_session("differ");
  const std::vector<std::string> base{
      "redis",          "--redis", TestRedis::shared().tcp_url(), "-p", "2", "-r", "1",
      "--join-timeout", "20s"};
  auto first = std::async(std::launch::async, [&] {
    auto args = base;
    args.insert(args.end(), {"-n", "20"});
    return run_rlcheck(worker_args(args, 2, 0, session));
  });
  auto args = base;
  args.insert(args.end(), {"-n", "30"});
  const ProcessOutcome second = run_rlcheck(worker_args(args, 2, 1, session));
  const ProcessOutcome other = first.get();
  INFO(second.err << other.err);
  CHECK(second.exit_code == 64);
  CHECK(other.exit_code == 64);
  CHECK(second.err.find("requests=") != std::string::npos);
}

namespace {

// Three workers run two runs of 20 s (30 requests a second); worker `victim` is killed once
// every worker said it is ready for run 1, so the run starts without it. Returns the outcomes
// of the other two.
std::vector<ProcessOutcome> kill_mid_run(int victim, const std::string& session) {
  const std::vector<std::string> load{"redis",      "--redis", TestRedis::shared().tcp_url(),
                                      "--limit",    "10",      "--window",
                                      "1s",         "--rate",  "30/s",
                                      "--duration", "20s",     "-p",
                                      "6",          "-r",      "2",
                                      "--json"};
  std::atomic<pid_t> victim_pid{-1};
  RunOptions victim_options;
  victim_options.on_started = [&victim_pid](pid_t pid) { victim_pid = pid; };
  auto killed = std::async(std::launch::async, [&] {
    return run_rlcheck(worker_args(load, 3, victim, session), victim_options);
  });
  auto survivors =
      std::async(std::launch::async, [&] { return run_workers(load, 3, session, {victim}); });

  rlcheck::redis::SyncClient coordinator = TestRedis::shared().connect();
  REQUIRE(coordinator.call({"SELECT", "2"}).has_value());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool all_ready = false;
  while (!all_ready && std::chrono::steady_clock::now() < deadline) {
    all_ready = true;
    for (int index = 0; index < 3; ++index) {
      const std::string key =
          "rlcheck:session:" + session + ":run:1:ready:" + std::to_string(index);
      auto exists = coordinator.call({"EXISTS", key});
      all_ready = all_ready && exists && (*exists)->integer == 1;
    }
    if (!all_ready)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling, not waiting out
  }
  REQUIRE(all_ready);
  REQUIRE(victim_pid.load() > 0);
  kill(victim_pid.load(), SIGKILL);
  CHECK(killed.get().exit_code == 128 + SIGKILL);
  return survivors.get();
}

}  // namespace

TEST_CASE("many hosts: a worker killed mid-run makes the others exit 3 with the partial report") {
  const std::string session = new_session("killed");
  const auto outcomes = kill_mid_run(2, session);
  const json report = report_of(outcomes.front());
  for (const ProcessOutcome& outcome : outcomes) {
    INFO(outcome.err);
    CHECK(outcome.exit_code == 3);
    CHECK(outcome.err.find("worker 2") != std::string::npos);
    CHECK(outcome.out == outcomes.front().out);
  }
  CHECK(report.at("verdict") == "error");
  CHECK(report.at("runs").size() == 1);  // the run it was lost in; no second run
  const json& lost = report.at("workers").at(2);
  CHECK(lost.at("lost") == true);
  CHECK(lost.at("lost_in_run") == 1);
  CHECK(lost.at("requests") == 0);
  CHECK(report.at("workers").at(0).at("requests").get<int64_t>() > 0);
  CHECK(report.at("session").at("lost").get<std::string>().find("worker 2") != std::string::npos);
  CHECK(report.at("session").at("merged_by") == 0);
}

TEST_CASE("many hosts: worker 0 killed mid-run: another merges what was shipped, and all exit 3" *
          doctest::test_suite("threads")) {
  const std::string session = new_session("killed-leader");
  const auto outcomes = kill_mid_run(0, session);
  REQUIRE(outcomes.size() == 2);
  const json report = report_of(outcomes.front());
  for (const ProcessOutcome& outcome : outcomes) {
    INFO(outcome.err);
    CHECK(outcome.exit_code == 3);
    CHECK(outcome.err.find("worker 0") != std::string::npos);
    CHECK(outcome.out == outcomes.front().out);  // one report, from the worker in its place
  }
  CHECK(report.at("verdict") == "error");
  REQUIRE(report.at("runs").size() == 1);
  const int merger = report.at("session").at("merged_by").get<int>();
  CHECK((merger == 1 || merger == 2));
  const json& lost = report.at("workers").at(0);
  CHECK(lost.at("lost") == true);
  CHECK(lost.at("lost_in_run") == 1);
  CHECK(lost.at("requests") == 0);
  // The survivors' shares of run 1 are all there, and judged: one identity, limit 10 per 1 s.
  const int64_t sent = report.at("workers").at(1).at("requests").get<int64_t>() +
                       report.at("workers").at(2).at("requests").get<int64_t>();
  CHECK(sent > 0);
  CHECK(report.at("runs").at(0).at("allowed").get<int64_t>() +
            report.at("runs").at(0).at("denied").get<int64_t>() +
            report.at("runs").at(0).at("errors").get<int64_t>() ==
        sent);
  CHECK(check_status(report, "contract") == "pass");
  // Worker 0's admissions are missing from the records: what they would decide is not judged.
  for (const char* id : {"utilisation", "retry-after-accuracy"})
    CHECK(check_status(report, id) != "fail");
}

TEST_CASE("many hosts: each worker writes the report files where its own command line says") {
  // Two "hosts": each worker runs in a directory of its own, and the relative directory each
  // names exists only where that worker runs.
  std::string pattern = (std::filesystem::temp_directory_path() / "rlcheck-paths-XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  const std::filesystem::path root = pattern;
  std::filesystem::create_directories(root / "host0" / "sub");
  std::filesystem::create_directories(root / "host1" / "own");
  const std::string session = new_session("paths");
  const std::vector<std::string> load{
      "redis", "--redis", TestRedis::shared().tcp_url(), "-n", "40", "-p", "4", "-r",
      "1",     "--json"};
  const auto worker = [&](int index, std::vector<std::string> outputs) {
    std::vector<std::string> args = load;
    args.insert(args.end(), outputs.begin(), outputs.end());
    RunOptions options;
    options.cwd = (root / ("host" + std::to_string(index))).string();
    return std::async(std::launch::async,
                      [=] { return run_rlcheck(worker_args(args, 2, index, session), options); });
  };
  auto first = worker(0, {"--report", "sub/r0.json"});
  auto second = worker(1, {"--report", "own/r1.json", "--junit", "own/r1.xml", "--html",
                           "own/r1.html", "--summary-md", "own/r1.md"});
  const ProcessOutcome zero = first.get();
  const ProcessOutcome one = second.get();
  INFO("worker 0: " << zero.err << "\nworker 1: " << one.err);
  CHECK(zero.exit_code == 0);
  CHECK(one.exit_code == 0);
  CHECK(report_of(zero).at("verdict") == "pass");
  CHECK(one.out == zero.out);
  CHECK(file_text(root / "host0" / "sub" / "r0.json") == zero.out);
  CHECK(file_text(root / "host1" / "own" / "r1.json") == zero.out);
  CHECK(file_text(root / "host1" / "own" / "r1.xml").find("<testsuite") != std::string::npos);
  CHECK(file_text(root / "host1" / "own" / "r1.md").starts_with("## ✅ rlcheck redis: PASS\n"));
  // Worker 0 gave no --html: the page it rendered for the others still has the timeline.
  CHECK(file_text(root / "host1" / "own" / "r1.html").find("<svg class=\"timeline\"") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(root / "host1" / "sub"));
  CHECK_FALSE(std::filesystem::exists(root / "host0" / "own"));
  std::error_code ignored;
  std::filesystem::remove_all(root, ignored);
}

TEST_CASE("many hosts: a usage error the command line shows is said before joining") {
  // No worker 0 ever joins: a worker that went on to join would wait out --join-timeout
  // (longer than the limit the process is given here).
  RunOptions options;
  options.limit = std::chrono::seconds(20);
  const auto alone_in_session = [&](std::vector<std::string> args) {
    for (const char* arg : {"--join-timeout", "40s", "-n", "20", "-p", "2"})
      args.emplace_back(arg);
    return run_rlcheck(worker_args(args, 2, 1, new_session("usage")), options);
  };
  for (const auto& redis : {std::vector<std::string>{"redis"},  // nor REDIS_URL
                            std::vector<std::string>{"redis", "--redis", "embedded"}}) {
    const ProcessOutcome refused = alone_in_session(redis);
    INFO(refused.err);
    CHECK_FALSE(refused.timed_out);
    CHECK(refused.exit_code == 64);
    CHECK(refused.err ==
          "rlcheck: --workers: no Redis was named, and each worker would test a private "
          "redis-server of its own; give every worker the same --redis (or REDIS_URL)\n");
  }
  options.env["http_proxy"] = "http://127.0.0.1:1";  // which the native client cannot use
  const ProcessOutcome native =
      alone_in_session({"http", "http://127.0.0.1:1/", "--http-client", "native", "--limit", "5"});
  INFO(native.err);
  CHECK_FALSE(native.timed_out);
  CHECK(native.exit_code == 64);
  CHECK(native.err.find("--http-client: native cannot serve") != std::string::npos);
}

TEST_CASE("many hosts: two sessions on one coordinator at once do not mix") {
  const std::string first_session = new_session("first");
  const std::string second_session = new_session("second");
  const std::string redis = TestRedis::shared().tcp_url();
  auto first = std::async(std::launch::async, [&] {
    return run_workers({"redis", "--redis", redis, "-n", "60", "-p", "6", "-r", "1", "--json"}, 2,
                       first_session);
  });
  const auto second = run_workers(
      {"redis", "--redis", redis, "-n", "100", "-p", "6", "-r", "1", "--json"}, 2, second_session);
  const auto first_outcomes = first.get();
  const json first_report = report_of(first_outcomes.front());
  const json second_report = report_of(second.front());
  CHECK(first_outcomes.front().exit_code == 0);
  CHECK(second.front().exit_code == 0);
  CHECK(first_report.at("session").at("id") == first_session);
  CHECK(second_report.at("session").at("id") == second_session);
  CHECK(shipped_requests(first_report) == 60);
  CHECK(shipped_requests(second_report) == 100);
  CHECK(first_report.at("runs").at(0).at("allowed") == 10);
  CHECK(second_report.at("runs").at(0).at("allowed") == 10);
}

TEST_CASE("many hosts: the flags are checked, and the environment forms are read") {
  const std::string redis = TestRedis::shared().tcp_url();
  const ProcessOutcome no_index = run_rlcheck(
      {"redis", "--redis", redis, "--workers", "2", "--coordinator", redis, "--session", "x"});
  CHECK(no_index.exit_code == 64);
  CHECK(no_index.err.find("--worker-index") != std::string::npos);
  const ProcessOutcome out_of_range =
      run_rlcheck({"redis", "--redis", redis, "--workers", "2", "--worker-index", "2",
                   "--coordinator", redis, "--session", "x"});
  CHECK(out_of_range.exit_code == 64);
  CHECK(out_of_range.err.find("--worker-index") != std::string::npos);
  const ProcessOutcome bad_session =
      run_rlcheck({"redis", "--redis", redis, "--workers", "2", "--worker-index", "0",
                   "--coordinator", redis, "--session", "a b"});
  CHECK(bad_session.exit_code == 64);
  CHECK(bad_session.err.find("--session") != std::string::npos);
  const ProcessOutcome unreachable =
      run_rlcheck({"redis", "--redis", redis, "--workers", "1", "--worker-index", "0",
                   "--coordinator", "redis://127.0.0.1:1", "--session", "x"});
  CHECK(unreachable.exit_code == 3);
  CHECK(unreachable.err.find("--coordinator") != std::string::npos);

  // Kubernetes' Indexed Job: the index from JOB_COMPLETION_INDEX, the rest from RLCHECK_*.
  RunOptions from_env;
  from_env.env = {{"RLCHECK_WORKERS", "1"},
                  {"JOB_COMPLETION_INDEX", "0"},
                  {"RLCHECK_COORDINATOR", coordinator_url()},
                  {"RLCHECK_SESSION", new_session("env")}};
  const ProcessOutcome alone = run_rlcheck(
      {"redis", "--redis", redis, "-n", "20", "-p", "2", "-r", "1", "--json"}, from_env);
  const json report = report_of(alone);
  CHECK(alone.exit_code == 0);
  CHECK(report.at("workers").size() == 1);
  CHECK(report.at("session").at("id") == from_env.env.at("RLCHECK_SESSION"));
}
