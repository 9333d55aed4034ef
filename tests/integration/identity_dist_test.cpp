// --identity-dist against the test redis-server: the records show the distribution asked for,
// and the checks keep their meaning under it (they audit each identity on its own): naive's
// race still fails `limit`, the Lua sliding window still passes (over Redis keys and over an
// HTTP {id} header: the identity a request names is the one it is recorded for), and
// --verify-retry-after retries for the identity it chose.

#include <doctest/doctest.h>

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

std::vector<std::string> redis_args(const std::string& strategy, const std::string& flags) {
  std::vector<std::string> args{"redis",      "--redis", TestRedis::shared().tcp_url(),
                                "--strategy", strategy,  "--json"};
  append_words(args, flags);
  return args;
}

}  // namespace

TEST_CASE("--identity-dist hot:0.5: identity 0 sends half the requests, lua still passes") {
  const std::string records = (std::filesystem::temp_directory_path() /
                               ("rlcheck-identity-dist-" + std::to_string(getpid()) + ".jsonl"))
                                  .string();
  std::vector<std::string> args = redis_args(
      "lua", "-n 2000 -p 20 -r 1 --limit 10 --identities 10 --identity-dist hot:0.5 --seed 7");
  args.insert(args.end(), {"--records", records});
  const json report = json_report(args, 0);
  CHECK(report.at("params").at("identity_dist") == "hot:0.5");
  CHECK(check_status(report, "limit") == "pass");

  std::map<int64_t, int64_t> per_identity;
  std::map<int64_t, int64_t> allowed;
  std::ifstream in(records);
  int64_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const json record = json::parse(line);
    const int64_t identity = record.at("identity").get<int64_t>();
    ++per_identity[identity];
    allowed[identity] += record.at("outcome") == "allowed" ? 1 : 0;
  }
  std::filesystem::remove(records);
  REQUIRE(lines == 2000);
  const double hot_share = static_cast<double>(per_identity[0]) / 2000;
  CHECK(hot_share > 0.46);
  CHECK(hot_share < 0.54);
  // The other nine split the rest, each about 1/18 of the requests.
  REQUIRE(per_identity.size() == 10);
  for (int64_t id = 1; id < 10; ++id) {
    CHECK(per_identity[id] > 1000 / 9 / 2);
    CHECK(per_identity[id] < 1000 / 9 * 2);
  }
  // Each identity was admitted its own limit: the hot one no more than the cold ones.
  for (const auto& [identity, count] : allowed)
    CHECK(count == 10);
}

TEST_CASE("--identity-dist hot:0.5: naive's race still fails limit") {
  const json report = json_report(
      redis_args("naive", "-n 200 -p 50 -r 2 --limit 10 --identities 10 --identity-dist hot:0.5"),
      1);
  CHECK(report.at("params").at("identity_dist") == "hot:0.5");
  CHECK(check_status(report, "limit") == "fail");
}

TEST_CASE("--identity-dist zipf:1.1: --verify-retry-after retries the identity it chose") {
  const json report =
      json_report(redis_args("lua",
                             "-n 100 -p 10 -r 1 --limit 5 --window 1s --identities 5 "
                             "--identity-dist zipf:1.1 --verify-retry-after"),
                  0);
  CHECK(report.at("params").at("identity_dist") == "zipf:1.1");
  CHECK(check_status(report, "retry-after-honest") == "pass");
  const json& verification = report.at("retry_verification");
  CHECK(verification.at("allowed") == true);
  CHECK(verification.at("identity").get<int64_t>() < 5);
  CHECK(verification.at("waited_ms").get<int64_t>() >= verification.at("told_ms").get<int64_t>());
}

TEST_CASE(
    "--identity-dist hot:0.5 over HTTP: {id} names the identity each request is recorded for") {
  // serve limits each X-API-Key on its own: if a request named another identity than its
  // record's, the hot identity's records would hold other identities' admissions.
  ServeProcess server({"--redis", TestRedis::shared().tcp_url() + "/1", "--listen", "127.0.0.1:0",
                       "--limit", "5", "--window", "10s", "--strategy", "lua", "--identity-header",
                       "X-API-Key"});
  const std::string key = "X-API-Key: dist-" + std::to_string(getpid()) + "-{id}";
  std::vector<std::string> args{"http", server.url(), "-H", key, "--json"};
  append_words(args,
               "-n 80 -p 8 -r 1 --limit 5 --window 10s --identities 4 --identity-dist "
               "hot:0.5 --seed 3");
  const json report = json_report(args, 0);
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  CHECK(report.at("runs").at(0).at("allowed") == 20);  // 5 for each of the 4 identities
}
