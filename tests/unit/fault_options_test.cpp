#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "base/exit_code.hpp"
#include "cli/command_line.hpp"
#include "command_line_support.hpp"

using rlcheck::base::ExitCode;
using rlcheck::base::FatalError;
using rlcheck::config::Config;
using rlcheck::config::FaultKind;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;
using namespace std::chrono_literals;

namespace {

Config parse(std::vector<const char*> args) {
  return parse_arguments(std::move(args)).config;
}

}  // namespace

TEST_CASE("--fault is repeatable and reaches the config in order, with the fail-mode settings") {
  const Config redis = parse({"redis", "--fault", "pause@1s+2s", "--fault", "flush-scripts@500ms",
                              "--expect-fail-mode", "closed", "--recovery", "2s"});
  REQUIRE(redis.faults.faults.size() == 2);
  CHECK(redis.faults.faults[0].kind == FaultKind::pause);
  CHECK(redis.faults.faults[0].duration == 2s);
  CHECK(redis.faults.faults[1].kind == FaultKind::flush_scripts);
  CHECK(redis.faults.faults[1].at == 500ms);
  CHECK(redis.checks.expect_fail_mode == "closed");
  CHECK(redis.checks.recovery == 2s);

  const Config http = parse({"http", "http://127.0.0.1:1/", "--fault", "kill-clients@1s",
                             "--limiter-redis", "redis://127.0.0.1:6380"});
  REQUIRE(http.faults.faults.size() == 1);
  CHECK(http.faults.limiter_redis == "redis://127.0.0.1:6380");
  CHECK(http.checks.recovery == 1s);  // the default
  CHECK_FALSE(http.checks.expect_fail_mode.has_value());

  const Config compare = parse({"compare", "--fault", "restart@1s", "--expect-fail-mode", "open"});
  CHECK(compare.faults.faults.size() == 1);
}

TEST_CASE("fault flags refuse what cannot work, naming the flag") {
  CHECK(usage_error({"redis", "--fault", "pause@1s"}) ==
        "--fault: 'pause@1s' needs a duration: pause@T+D");
  CHECK(usage_error({"http", "http://127.0.0.1:1/", "--fault", "pause@1s+1s"})
            .starts_with("--fault: rlcheck http needs --limiter-redis"));
  CHECK(usage_error({"http", "http://127.0.0.1:1/", "--fault", "restart@1s", "--limiter-redis",
                     "redis://127.0.0.1:6380"})
            .find("restarts only the private redis-server") != std::string::npos);
  CHECK(usage_error({"redis", "--redis", "redis://127.0.0.1:6380", "--fault", "restart@1s"})
            .find("not --redis redis://127.0.0.1:6380") != std::string::npos);
  CHECK(usage_error({"redis", "--embedded-cluster", "2", "--fault", "restart@1s"})
            .find("not --embedded-cluster") != std::string::npos);
  CHECK(usage_error({"http", "http://127.0.0.1:1/", "--fault", "pause@1s+1s", "--limiter-redis",
                     "http://x"})
            .starts_with("--limiter-redis: "));
  CHECK(usage_error({"http", "http://127.0.0.1:1/", "--limiter-redis", "redis://127.0.0.1:6380"})
            .starts_with("--limiter-redis: only used by --fault"));
  CHECK(usage_error({"redis", "--fault", "pause@1s+1s", "--expect-fail-mode", "half"}) ==
        "--expect-fail-mode: expected open or closed, got 'half'");
  CHECK(usage_error({"redis", "--expect-fail-mode", "open"})
            .starts_with("--expect-fail-mode: needs --fault"));
  CHECK(usage_error({"redis", "--fault", "pause@1s+1s", "--recovery", "0s"}) ==
        "--recovery: must be above 0, got 0s");
  CHECK(usage_error({"redis", "--recovery", "1s"}).starts_with("--recovery: needs --fault"));
  CHECK(usage_error({"compare", "--url", "http://127.0.0.1:1/", "--fault", "pause@1s+1s"})
            .starts_with("--fault: compare applies faults to strategies"));
}
