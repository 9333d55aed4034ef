// The contract fit against a real redis-server: a limiter that fails the contract it was judged
// by, when the user named none, is told which promise it does keep, with the flags to say so.
// Database 8 keeps these keys apart from the other integration tests.
//
// The limiter is lua/token_bucket.lua as a capacity-5 bucket refilling 1 token a second
// (--arg 5 --arg 1 --arg 1000), tested with --limit 5 --window 5s: a user script is judged by
// a sliding window of 5 per 5 s unless --contract says otherwise. At 20/s for 3 s the bucket
// admits its 5 tokens in the first 250 ms and then one more each second, so 7 admissions land
// within 3 s, over the sliding limit of 5 whatever the timing: the failure is certain, and so
// is the first run of 5 admissions (the bucket gains a quarter of a token while it is spent)
// the burst is fitted from.

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

const char* const k_bucket_load =
    "--arg 5 --arg 1 --arg 1000 --limit 5 --window 5s --rate 20/s --duration 3s -r 1";

std::string fit_db_url() {
  return TestRedis::shared().tcp_url() + "/8";
}

std::string bucket_script() {
  return std::string(RLCHECK_SOURCE_DIR) + "/lua/token_bucket.lua";
}

// `rlcheck redis --redis <db 8> --script token_bucket.lua` with the whitespace-separated
// `flags`; the exit code must be `expected_exit`.
ProcessOutcome bucket_run(const std::string& flags, int expected_exit) {
  std::vector<std::string> args{"redis", "--redis", fit_db_url(), "--script", bucket_script()};
  append_words(args, flags);
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stderr: " << outcome.err);
  INFO("stdout: " << outcome.out);
  REQUIRE(outcome.exit_code == expected_exit);
  return outcome;
}

bool any_detail_mentions(const json& report, const std::string& text) {
  for (const auto& check : report.at("checks")) {
    if (check.at("detail").get<std::string>().find(text) != std::string::npos)
      return true;
  }
  return false;
}

}  // namespace

TEST_CASE("contract fit: a token bucket judged as a sliding window is told the flags it fits") {
  const json report = json::parse(bucket_run(std::string(k_bucket_load) + " --json", 1).out);
  CHECK(report["params"]["contract"] == "sliding");
  CHECK(report["verdict"] == "fail");
  CHECK(check_status(report, "limit") == "fail");
  const std::string detail = check_detail(report, "limit");
  MESSAGE("limit: " << detail);
  CHECK(detail.find("the observations fit --contract token-bucket --burst 5 --refill 1/s") !=
        std::string::npos);

  REQUIRE(report.contains("contract_fit"));
  const json& fit = report["contract_fit"];
  CHECK(fit["contract"] == "token-bucket");
  CHECK(fit["burst"] == 5);
  CHECK(fit["refill"] == "1/s");
  CHECK(fit["flags"] == "--contract token-bucket --burst 5 --refill 1/s");
  bool clears_limit = false;
  for (const auto& id : fit["clears"])
    clears_limit = clears_limit || id == "limit";
  CHECK(clears_limit);

  // The flags it names do judge the same limiter a pass.
  const json refit = json::parse(
      bucket_run(std::string(k_bucket_load) + " --json " + fit["flags"].get<std::string>(), 0).out);
  CHECK(refit["params"]["contract"] == "token-bucket");
  CHECK_FALSE(refit.contains("contract_fit"));
}

TEST_CASE("contract fit: a contract named with --contract is not second-guessed") {
  const json report =
      json::parse(bucket_run(std::string(k_bucket_load) + " --contract sliding --json", 1).out);
  CHECK(check_status(report, "limit") == "fail");
  CHECK_FALSE(report.contains("contract_fit"));
  CHECK_FALSE(any_detail_mentions(report, "observations fit"));
}

TEST_CASE("contract fit: a limiter that keeps its contract gets no fit") {
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", fit_db_url(), "--strategy", "lua", "--limit", "5",
                   "--window", "1s", "--rate", "20/s", "--duration", "2s", "-r", "1", "--json"});
  INFO("stderr: " << outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK_FALSE(report.contains("contract_fit"));
  CHECK_FALSE(any_detail_mentions(report, "observations fit"));
}

TEST_CASE("contract fit: the hook reason names the flags the limiter fits") {
  RunOptions options;
  options.stdin_mode = StdinMode::empty;
  std::vector<std::string> args{"redis", "--redis", fit_db_url(), "--script", bucket_script()};
  std::istringstream words(k_bucket_load);
  for (std::string word; words >> word;)
    args.push_back(word);
  args.push_back("--hook");
  const ProcessOutcome outcome = run_rlcheck(args, options);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.err.find("what it did fits --contract token-bucket --burst 5 --refill 1/s") !=
        std::string::npos);
}

TEST_CASE("contract fit: the naive race is named a race, never fitted as a bigger bucket") {
  // The seed's naive GET-then-INCR under 50 concurrent requests admits more than 10 in its
  // first wave, all in flight at once: a bucket of that size "explains" it, and is not what
  // happened.
  const ProcessOutcome outcome =
      run_rlcheck({"redis", "--redis", fit_db_url(), "--strategy", "naive", "--json"});
  INFO("stderr: " << outcome.err);
  INFO("stdout: " << outcome.out);
  REQUIRE(outcome.exit_code == 1);
  const json report = json::parse(outcome.out);
  CHECK(check_status(report, "limit") == "fail");
  CHECK_FALSE(any_detail_mentions(report, "token-bucket"));
  if (report.contains("contract_fit"))
    CHECK(report["contract_fit"]["contract"] != "token-bucket");
  CHECK(check_detail(report, "limit").find("check-then-act race") != std::string::npos);
}
