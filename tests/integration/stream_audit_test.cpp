// --audit stream against the test redis-server: the records are audited as they come and
// dropped, and the verdicts stay those of the batch audit: the naive race fails the limit, the
// atomic strategies pass under each contract the stream audits (sliding, fixed, token bucket;
// utilisation and Retry-After accuracy included), and --records is written as the run goes, every
// request once, in send order. That the figures are the batch audit's is
// tests/unit/stream_audit_test.cpp's.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

json streamed(const std::vector<std::string>& extra, int expected_exit) {
  std::vector<std::string> args{"redis",   "--redis", TestRedis::shared().tcp_url(),
                                "--audit", "stream",  "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stderr: " << outcome.err);
  REQUIRE(outcome.exit_code == expected_exit);
  CHECK(outcome.err.find("out of send order") == std::string::npos);
  json report = json::parse(outcome.out);
  CHECK(report["params"]["audit"] == "stream");
  return report;
}

}  // namespace

TEST_CASE("--audit stream: the naive race fails the limit, every time") {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const json report = streamed({"--strategy", "naive", "-n", "200", "-p", "50"}, 1);
    CHECK(report["summary"]["runs_over_limit"].get<int>() >= 3);
    CHECK(check_status(report, "limit") == "fail");
    CHECK(check_status(report, "contract") == "fail");
    CHECK(report["summary"]["allowed"]["max"].get<int>() > 10);
  }
}

TEST_CASE("--audit stream: atomic strategies pass under the contract each keeps") {
  // Paced over four windows, so utilisation (lock-outs) is judged too.
  for (const char* strategy : {"lua", "fixed-window", "token-bucket"}) {
    CAPTURE(strategy);
    const json report = streamed({"--strategy", strategy, "--rate", "200/s", "--duration", "2s",
                                  "-p", "20", "-r", "1", "--window", "500ms", "--limit", "20"},
                                 0);
    CHECK(report["verdict"] == "pass");
    for (const char* judged : {"limit", "contract", "utilisation", "retry-after-present",
                               "retry-after-accuracy", "key-ttl", "errors"})
      CHECK(check_status(report, judged) == "pass");
    const auto& run = report["runs"][0];
    CHECK(run["allowed"].get<int>() + run["denied"].get<int>() == 400);
    CHECK(run["allowed"].get<int>() >= 80);
  }
}

TEST_CASE("--audit stream --records: every request once, in send order, as the report counts") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rlcheck-stream-" + std::to_string(getpid()) + ".jsonl"))
                               .string();
  const json report =
      streamed({"--strategy", "lua", "-n", "400", "-p", "20", "-r", "2", "--records", path}, 0);
  std::ifstream in(path);
  std::map<int, std::set<int>> seqs;
  std::map<int, std::map<std::string, int>> outcomes;
  std::map<int, int64_t> last_send;
  int lines = 0;
  bool in_send_order = true;
  for (std::string line; std::getline(in, line); ++lines) {
    const json record = json::parse(line);
    const int run = record["run"];
    seqs[run].insert(record["seq"].get<int>());
    ++outcomes[run][record["outcome"].get<std::string>()];
    const int64_t send = record["send_us"];
    in_send_order = in_send_order && send >= last_send[run];
    last_send[run] = send;
  }
  std::filesystem::remove(path);
  CHECK(lines == 800);
  CHECK(in_send_order);
  REQUIRE(report["runs"].size() == 2);
  for (const auto& run : report["runs"]) {
    const int number = run["run"];
    CHECK(seqs[number].size() == 400);
    CHECK(outcomes[number]["allowed"] == run["allowed"].get<int>());
    CHECK(outcomes[number]["denied"] == run["denied"].get<int>());
  }
}

TEST_CASE("--audit stream over several worker threads" * doctest::test_suite("threads")) {
  const json naive = streamed({"--strategy", "naive", "--threads", "2", "-r", "2"}, 1);
  CHECK(naive["summary"]["runs_over_limit"].get<int>() >= 1);
  const json lua = streamed(
      {"--strategy", "lua", "--threads", "2", "--rate", "400/s", "--duration", "1s", "-r", "1"}, 0);
  CHECK(lua["summary"]["allowed"]["max"] == 10);
  CHECK(lua["runs"][0]["denied"] == 390);
}

TEST_CASE("--audit stream --html: the report, each run without its timeline") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rlcheck-stream-" + std::to_string(getpid()) + ".html"))
                               .string();
  const json report = streamed({"--strategy", "lua", "-n", "100", "-r", "1", "--html", path}, 0);
  std::ifstream in(path);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  CHECK(html.find("<html") != std::string::npos);
  CHECK(html.find("no timeline was recorded") != std::string::npos);
}

TEST_CASE("--audit stream over HTTP: --limit and --window settle the contract before the runs") {
  ServeProcess serve({"--redis", TestRedis::shared().tcp_url() + "/1", "--listen", "127.0.0.1:0",
                      "--limit", "20", "--window", "1s"});
  const std::string key = "X-API-Key: stream-" + std::to_string(getpid()) + "-{run}";
  const ProcessOutcome outcome =
      run_rlcheck({"http", serve.url(), "-H", key, "-l", "20", "-w", "1s", "--rate", "200/s",
                   "--duration", "2s", "-p", "10", "-r", "2", "--audit", "stream", "--json"});
  INFO("stderr: " << outcome.err);
  INFO("serve: " << serve.log());
  REQUIRE(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK(report["params"]["audit"] == "stream");
  for (const char* judged :
       {"limit", "contract", "utilisation", "retry-after-present", "retry-after-accuracy"})
    CHECK(check_status(report, judged) == "pass");
  for (const auto& run : report["runs"])
    CHECK(run["allowed"].get<int>() + run["denied"].get<int>() == 400);

  // Unreachable: exit 3 before anything is judged, as in a batch run.
  const ProcessOutcome refused = run_rlcheck(
      {"http", "http://127.0.0.1:1/", "-l", "5", "-w", "1s", "-n", "10", "--audit", "stream"});
  CHECK(refused.exit_code == 3);
  // The limit and window the replies would advertise are read after the runs: not streamed.
  const ProcessOutcome unnamed =
      run_rlcheck({"http", serve.url(), "-l", "5", "-n", "10", "--audit", "stream"});
  CHECK(unnamed.exit_code == 64);
  CHECK(unnamed.err.find("--window") != std::string::npos);
}
