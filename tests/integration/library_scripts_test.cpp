// Scripts as libraries ship them (--reply, --script-keys) against a real redis-server: the
// fixtures in tests/fixtures/replies are written in the style of express-rate-limit's store,
// redis-cell's CL.THROTTLE and go-redis' redis_rate; the correct ones pass unwrapped, the broken
// ones fail the check that names their flaw. Every run is a burst in the closed model, over in
// milliseconds against a window of 60 s, so the counts cannot depend on timing. Database 6
// keeps these keys apart from the other integration tests.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/endpoint.hpp"
#include "redis/sync_client.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string library_db_url() {
  return TestRedis::shared().tcp_url() + "/6";
}

std::string reply_fixture(const std::string& name) {
  return fixture("replies/" + name);
}

// `rlcheck redis --redis <db 6> --script <fixture> <flags>`; the exit code must be `expected`.
ProcessOutcome run_script(const std::string& script, const std::string& flags, int expected) {
  std::vector<std::string> args{"redis", "--redis", library_db_url(), "--script",
                                reply_fixture(script)};
  append_words(args, flags);
  const ProcessOutcome outcome = run_rlcheck(args);
  INFO("stderr: " << outcome.err);
  INFO("stdout: " << outcome.out);
  REQUIRE(outcome.exit_code == expected);
  return outcome;
}

json run_script_json(const std::string& script, const std::string& flags, int expected) {
  return json::parse(run_script(script, "--json " + flags, expected).out);
}

rlcheck::redis::SyncClient library_db() {
  auto endpoint = rlcheck::redis::parse_endpoint(library_db_url());
  REQUIRE(endpoint);
  auto client = rlcheck::redis::SyncClient::connect(*endpoint, std::chrono::seconds(5));
  REQUIRE(client);
  return std::move(*client);
}

std::vector<std::string> library_db_keys() {
  auto client = library_db();
  auto reply = client.call({"KEYS", "*"});  // database 6 holds only this file's keys
  REQUIRE(reply);
  std::vector<std::string> keys;
  for (size_t i = 0; i < (*reply)->elements; ++i)
    keys.emplace_back((*reply)->element[i]->str, (*reply)->element[i]->len);
  std::sort(keys.begin(), keys.end());
  return keys;
}

int64_t integer_of(rlcheck::redis::SyncClient& client,
                   std::initializer_list<std::string_view> command) {
  auto reply = client.call(command);
  REQUIRE(reply);
  REQUIRE((*reply)->type == REDIS_REPLY_INTEGER);
  return (*reply)->integer;
}

void check_allowed_per_run(const json& report, int allowed) {
  for (const auto& run : report["runs"]) {
    CHECK(run["allowed"] == allowed);
    CHECK(run["errors"] == 0);
  }
}

constexpr const char* k_burst = "-n 60 -p 20 -r 2";

}  // namespace

TEST_CASE("--reply counter: an INCR + PEXPIRE store holds the limit and its PTTL is the hint") {
  const json report =
      run_script_json("counter_store.lua", std::string("--reply counter ") + k_burst, 0);
  check_allowed_per_run(report, 10);
  CHECK(check_status(report, "limit") == "pass");
  CHECK(check_status(report, "key-ttl") == "pass");
  CHECK(check_status(report, "retry-after-present") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
  CHECK(library_db_keys().empty());  // the fresh keys are deleted after the runs

  // Read as rlcheck's own contract, {hits, ttl_ms} is a wrong shape, named as such.
  const ProcessOutcome contract = run_script("counter_store.lua", k_burst, 3);
  CHECK(contract.err.find("counter_store.lua") != std::string::npos);
  CHECK(contract.err.find("{allowed, remaining, retry_ms}") != std::string::npos);
}

TEST_CASE("--reply counter: a store without PEXPIRE fails key-ttl") {
  const json report =
      run_script_json("counter_no_pexpire.lua", std::string("--reply counter ") + k_burst, 1);
  check_allowed_per_run(report, 10);
  CHECK(check_status(report, "key-ttl") == "fail");
  CHECK(check_status(report, "retry-after-present") == "fail");  // PTTL -1: no wait to tell
  CHECK(report["runs"][0]["keys_without_ttl"].size() == 1);
  CHECK(library_db_keys().empty());
}

TEST_CASE("--reply cell: a CL.THROTTLE-shaped GCRA passes, one admitting limit + 1 fails limit") {
  // CL.THROTTLE key 9 10 60: bursts of max_burst + 1 = 10, then 10 per 60 s: the gcra contract
  // with its defaults (burst = limit = 10, refill = 10 per 60 s window).
  const std::string flags =
      std::string("--reply cell --arg 9 --arg 10 --arg 60 --contract gcra ") + k_burst;
  const json report = run_script_json("cell_gcra.lua", flags, 0);
  check_allowed_per_run(report, 10);
  CHECK(check_status(report, "contract") == "pass");
  CHECK(check_status(report, "retry-after-present") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");
  CHECK(check_status(report, "key-ttl") == "pass");

  const json broken = run_script_json("cell_limit_off_by_one.lua", flags, 1);
  check_allowed_per_run(broken, 11);
  CHECK(check_status(broken, "limit") == "fail");
  CHECK(check_status(broken, "contract") == "fail");
}

TEST_CASE("--reply rate: redis_rate's GCRA passes; retry_after in ms fails bound and accuracy") {
  // allow_n(key, burst 10, rate 10, period 60 s, cost 1).
  const std::string flags =
      std::string("--reply rate --arg 10 --arg 10 --arg 60 --arg 1 --contract gcra ") + k_burst;
  const json report = run_script_json("rate_gcra.lua", flags, 0);
  check_allowed_per_run(report, 10);
  CHECK(check_status(report, "retry-after-present") == "pass");
  CHECK(check_status(report, "retry-after-bound") == "pass");
  CHECK(check_status(report, "retry-after-accuracy") == "pass");

  const json broken = run_script_json("rate_retry_in_ms.lua", flags, 1);
  check_allowed_per_run(broken, 10);  // the decisions themselves are right
  CHECK(check_status(broken, "contract") == "pass");
  CHECK(check_status(broken, "retry-after-bound") == "fail");
  CHECK(check_status(broken, "retry-after-accuracy") == "fail");
}

TEST_CASE("a reply of another format's shape is an error naming the script and the format") {
  const std::string gcra_args = std::string(" --arg 9 --arg 10 --arg 60 ") + k_burst;
  // CL.THROTTLE's five integers read as redis_rate's four.
  const ProcessOutcome rate = run_script("cell_gcra.lua", "--reply rate" + gcra_args, 3);
  CHECK(rate.err.find("cell_gcra.lua") != std::string::npos);
  CHECK(rate.err.find("array of 5") != std::string::npos);
  CHECK(rate.err.find("--reply rate") != std::string::npos);
  // redis_rate's four read as a counter store's two.
  const ProcessOutcome counter =
      run_script("rate_gcra.lua", "--reply counter --arg 10 --arg 10 --arg 60 --arg 1 -r 1", 3);
  CHECK(counter.err.find("rate_gcra.lua") != std::string::npos);
  CHECK(counter.err.find("array of 4") != std::string::npos);
  CHECK(counter.err.find("{hits, ttl_ms}") != std::string::npos);
  // Each names the --reply that does read it.
  CHECK(rate.err.find("--reply cell reads it") != std::string::npos);
  CHECK(counter.err.find("--reply rate reads it") != std::string::npos);
  CHECK(library_db_keys().empty());
}

TEST_CASE("a bare hit count read as the contract names --reply count") {
  const ProcessOutcome count =
      run_script("count_client_clock.lua",
                 "--arg {now_s} --arg {window_s} --arg {uuid} -l 5 -w 2s -n 12 -p 12 -r 1", 3);
  CHECK(count.err.find("not 1 or 0") != std::string::npos);
  CHECK(count.err.find("--reply count reads it: a hit count, allowed while at most --limit") !=
        std::string::npos);
  CHECK(library_db_keys().empty());
}

TEST_CASE("--script-keys 2: a log and a counter under one hash tag, audited and cleaned up") {
  const json report =
      run_script_json("log_and_counter.lua", std::string("--script-keys 2 ") + k_burst, 0);
  check_allowed_per_run(report, 10);
  CHECK(check_status(report, "key-ttl") == "pass");
  CHECK(library_db_keys().empty());  // both keys of every run are deleted

  // An explicit key is kept: {KEY}:0 holds the log, {KEY}:1 the denials, both expiring.
  auto client = library_db();
  REQUIRE(client.call({"DEL", "{team:two}:0", "{team:two}:1"}));
  run_script("log_and_counter.lua", "--script-keys 2 --key team:two --reset -n 60 -p 20 -r 1", 0);
  CHECK(library_db_keys() == std::vector<std::string>{"{team:two}:0", "{team:two}:1"});
  CHECK(integer_of(client, {"ZCARD", "{team:two}:0"}) == 10);
  auto denials = client.call({"GET", "{team:two}:1"});
  REQUIRE(denials);
  CHECK(std::string((*denials)->str, (*denials)->len) == "50");  // 60 requests, 10 admitted
  CHECK(integer_of(client, {"PTTL", "{team:two}:1"}) > 0);
  REQUIRE(client.call({"DEL", "{team:two}:0", "{team:two}:1"}));

  // A second key left without a TTL fails key-ttl, naming it.
  const json broken = run_script_json("log_and_counter_no_expire.lua",
                                      std::string("--script-keys 2 ") + k_burst, 1);
  CHECK(check_status(broken, "key-ttl") == "fail");
  const json& missing = broken["runs"][0]["keys_without_ttl"];
  REQUIRE(missing.size() == 1);
  const std::string key = missing[0].get<std::string>();
  CHECK(key.starts_with("{rlcheck:"));
  CHECK(key.ends_with("}:1"));
  CHECK(library_db_keys().empty());
}
