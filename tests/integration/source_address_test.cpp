// --source-address: `rlcheck serve` keys its limiter by the client address when it is given no
// --identity-header, so identities that leave from addresses of their own each get the limit,
// and identities that share one address share it. Bad lists are usage errors; an address this
// host cannot send from stops the test before any load. The "http source-address" cases run
// once more on the curl client (tests/CMakeLists.txt).

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
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

constexpr int k_limit = 5;
constexpr int k_identities = 8;

// serve keyed by the client address, on the shared redis-server's database 1 (its keys outlive
// it until their TTL; other tests expect database 0 to hold no rlcheck:* keys). Every start
// takes a new key prefix: each test meets a fresh limiter.
std::vector<std::string> serve_by_address_args() {
  return {"--redis",    TestRedis::shared().tcp_url() + "/1",
          "--listen",   "127.0.0.1:0",
          "--strategy", "lua",
          "--limit",    std::to_string(k_limit),
          "--window",   "60s"};
}

// 80 requests over 8 identities, 10 each: each identity's limit (5) is reached within the run.
std::vector<std::string> load_args(const std::string& url) {
  return {"http", url, "--identities", std::to_string(k_identities), "-n",      "80",    "-p", "16",
          "-r",   "1", "--limit",      std::to_string(k_limit),      "--exact", "--json"};
}

// A file path of this test's own, removed when it goes.
class TempFile {
 public:
  explicit TempFile(const std::string& name) {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("rlcheck-source-address-" + std::to_string(getpid()) + "-" +
              std::to_string(counter++) + "-" + name))
                .string();
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

json parse_report(const ProcessOutcome& outcome) {
  INFO("stdout: " << outcome.out);
  INFO("stderr: " << outcome.err);
  REQUIRE_FALSE(outcome.timed_out);
  return json::parse(outcome.out);
}

// Allowed requests per identity, from a --records JSON-lines file.
std::map<int, int> allowed_by_identity(const std::string& records_path) {
  std::map<int, int> allowed;
  std::ifstream records(records_path);
  for (std::string line; std::getline(records, line);) {
    const json record = json::parse(line);
    if (record.at("outcome") == "allowed")
      ++allowed[record.at("identity").get<int>()];
  }
  return allowed;
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("http source-address: each identity leaves from its own address and gets its limit") {
  ServeProcess serve(serve_by_address_args());
  TempFile records("records.jsonl");
  std::vector<std::string> args = load_args(serve.url());
  args.insert(args.end(), {"--source-address", "127.0.0.1-127.0.0.8", "--records", records.path()});
  const ProcessOutcome outcome = run_rlcheck(args);
  const json report = parse_report(outcome);
  INFO("serve: " << serve.log());
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 0);
  CHECK(report["params"]["source_addresses"] ==
        json::array({"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6",
                     "127.0.0.7", "127.0.0.8"}));
  REQUIRE(report["runs"].size() == 1);
  CHECK(report["runs"][0]["allowed"] == k_identities * k_limit);
  CHECK(report["runs"][0]["errors"] == 0);
  CHECK(check_status(report, "utilisation") == "pass");
  const std::map<int, int> allowed = allowed_by_identity(records.path());
  CHECK(allowed.size() == k_identities);
  for (const auto& [identity, count] : allowed) {
    INFO("identity " << identity);
    CHECK(count == k_limit);
  }
}

TEST_CASE("http source-address: two identities per address share that address's limit") {
  ServeProcess serve(serve_by_address_args());
  std::vector<std::string> args = load_args(serve.url());
  args.insert(args.end(), {"--source-address", "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4"});
  const ProcessOutcome outcome = run_rlcheck(args);
  const json report = parse_report(outcome);
  INFO("serve: " << serve.log());
  // Identities j and j + 4 leave from one address: 4 addresses, 5 admissions each.
  REQUIRE(report["runs"].size() == 1);
  CHECK(report["runs"][0]["allowed"] == 4 * k_limit);
  // Under --exact, an identity admitted less than its limit allows fails utilisation.
  CHECK(check_status(report, "utilisation") == "fail");
  CHECK(outcome.exit_code == 1);
}

TEST_CASE("http source-address: without it every identity shares one client address") {
  ServeProcess serve(serve_by_address_args());
  const ProcessOutcome outcome = run_rlcheck(load_args(serve.url()));
  const json report = parse_report(outcome);
  INFO("serve: " << serve.log());
  CHECK_FALSE(report["params"].contains("source_addresses"));
  REQUIRE(report["runs"].size() == 1);
  CHECK(report["runs"][0]["allowed"] == k_limit);
  CHECK(check_status(report, "utilisation") == "fail");
  CHECK(outcome.exit_code == 1);
}

TEST_CASE("http source-address: a bad list is a usage error naming the flag and the item") {
  for (const char* bad : {"127.0.0.8-127.0.0.1", "127.0.0.1,,127.0.0.2", "not-an-address"}) {
    CAPTURE(bad);
    const ProcessOutcome outcome =
        run_rlcheck({"http", "http://127.0.0.1:1/", "--source-address", bad});
    CHECK(outcome.exit_code == 64);
    CHECK(mentions(outcome.err, "--source-address"));
  }
  const ProcessOutcome named =
      run_rlcheck({"http", "http://127.0.0.1:1/", "--source-address", "127.0.0.1,10.0.0.256"});
  CHECK(mentions(named.err, "'10.0.0.256'"));
}

TEST_CASE("http source-address: an address this host does not have stops the test before load") {
  ServeProcess serve(serve_by_address_args());
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): documentation only, never a host's own address.
  const ProcessOutcome outcome =
      run_rlcheck({"http", serve.url(), "-n", "5", "--source-address", "127.0.0.1,192.0.2.1"});
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(mentions(outcome.err, "--source-address"));
  CHECK(mentions(outcome.err, "192.0.2.1"));
  // Nothing was sent, not even from the address that could be bound: 127.0.0.1 still has its
  // whole limit.
  const ProcessOutcome after =
      run_rlcheck({"http", serve.url(), "-n", std::to_string(k_limit), "-p", "1", "-r", "1",
                   "--limit", std::to_string(k_limit), "--exact", "--json"});
  const json report = parse_report(after);
  CHECK(report["runs"][0]["allowed"] == k_limit);
}

TEST_CASE("redis source-address: the load's connections bind the address; params carry it") {
  // The shared redis-server is in protected mode (no password): it serves 127.0.0.1 and ::1
  // only, so 127.0.0.1 is the one loopback address it accepts connections from.
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", TestRedis::shared().tcp_url(), "-n", "40", "-p", "4", "-r",
                   "1", "--limit", "10", "--source-address", "127.0.0.1", "--json"});
  const json report = parse_report(outcome);
  CHECK(outcome.exit_code == 0);
  CHECK(report["params"]["source_addresses"] == json::array({"127.0.0.1"}));
  CHECK(report["runs"][0]["allowed"] == 10);
  CHECK(report["runs"][0]["errors"] == 0);

  const ProcessOutcome unbindable = run_rlcheck(
      {"redis", "--redis", TestRedis::shared().tcp_url(), "--source-address", "192.0.2.1"});
  CHECK(unbindable.exit_code == 3);
  CHECK(mentions(unbindable.err, "--source-address"));
  CHECK(mentions(unbindable.err, "192.0.2.1"));
}
