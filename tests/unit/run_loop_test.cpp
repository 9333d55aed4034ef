// The run loop over a fake target (no Redis, no sockets): the order in which it asks the
// target, the policies every kind shares (stop early on errors, one no-connection error,
// runs judged under each configuration the target offers), and Ctrl-C before a run.

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <event2/event.h>

#include "base/exit_code.hpp"
#include "runner/run_loop.hpp"
#include "shared/fake_target.hpp"

using namespace rlcheck;
using engine::Decision;
using engine::ErrorKind;
using engine::Outcome;

namespace {

using rlcheck::test::Behaviour;
using rlcheck::test::FakeTarget;

config::Config config_of(int64_t requests, int runs, int64_t limit) {
  config::Config config;
  config.load.requests = requests;
  config.load.concurrency = 4;
  config.load.threads = 1;
  config.load.runs = runs;
  config.load.timeout = std::chrono::seconds(5);
  config.checks.limit = limit;
  config.checks.limit_given = true;
  config.output.quiet = true;
  return config;
}

}  // namespace

TEST_CASE("run loop: each run prepared, run, audited and cleaned up in order, then judged") {
  const config::Config config = config_of(20, 2, 5);
  FakeTarget target(config, {});
  const report::Report report = runner::run_test(target, config);
  CHECK(target.calls == std::vector<std::string>{"prepare_test", "judgings 0", "prepare_run 1",
                                                 "clients 1", "audit_state 1", "clean_up 1",
                                                 "prepare_run 2", "clients 2", "audit_state 2",
                                                 "clean_up 2"});
  REQUIRE(report.runs.size() == 2);
  for (const checks::RunStats& run : report.runs) {
    CHECK(run.allowed == 5);
    CHECK(run.denied == 15);
    // What the state was found to be after the run reaches its summary.
    REQUIRE(run.key_ttls.size() == 1);
    CHECK(run.key_ttls[0].ttl_ms == 20);
  }
  CHECK(report.keys_left == std::vector<std::string>{"key 1", "key 2"});
  CHECK(report.target.url == "fake://limiter");
  CHECK(report.verdict == checks::Verdict::pass);
}

TEST_CASE(
    "run loop: a target judged after its runs keeps them whole, and the first passing "
    "configuration is reported") {
  const config::Config config = config_of(20, 2, 5);
  FakeTarget target(config, {});
  target.judged_early = false;
  SUBCASE("the second configuration passes") {
    target.judged_limits = {3, 5};
    const report::Report report = runner::run_test(target, config);
    CHECK(target.calls.back() == "judgings 2");  // after the runs, with both
    CHECK(report.params.limit == 5);
    CHECK(report.verdict == checks::Verdict::pass);
  }
  SUBCASE("none passes: the one with the fewest failed checks, the last on a tie") {
    target.judged_limits = {4, 3};
    const report::Report report = runner::run_test(target, config);
    CHECK(report.params.limit == 3);
    CHECK(report.verdict == checks::Verdict::fail);
  }
}

TEST_CASE("run loop: errors above --max-errors stop a run, whatever the target") {
  config::Config config = config_of(200, 1, 5);
  FakeTarget target(config, {5, true, ErrorKind::server_error});
  const report::Report report = runner::run_test(target, config);
  REQUIRE(report.runs.size() == 1);
  CHECK(report.runs[0].stopped_on_errors);
  CHECK(report.runs[0].requests < 200);
  CHECK(report.verdict == checks::Verdict::error);
}

TEST_CASE("run loop: no connection in the first run is one error, for every kind of target") {
  const config::Config config = config_of(20, 2, 5);
  SUBCASE("no connection became ready before the start line (redis)") {
    FakeTarget target(config, {5, false, ErrorKind::none});
    CHECK_THROWS_WITH_AS(runner::run_test(target, config),
                         "no connection to fake://limiter became ready: refused", base::FatalError);
  }
  SUBCASE("every request failed to connect (http, whose connections open with requests)") {
    FakeTarget target(config, {5, true, ErrorKind::refused});
    CHECK_THROWS_WITH_AS(
        runner::run_test(target, config),
        "no connection to fake://limiter became ready: connection refused by the fake",
        base::FatalError);
  }
}

TEST_CASE("run loop: Ctrl-C before a run ends the test with the runs so far") {
  const config::Config config = config_of(20, 3, 5);
  FakeTarget target(config, {});
  target.interrupt_before_run = 2;
  const report::Report report = runner::run_test(target, config);
  CHECK(report.runs.size() == 1);
  CHECK(report.interrupted);
  CHECK(report.verdict == checks::Verdict::interrupted);
}
