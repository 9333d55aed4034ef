#include <doctest/doctest.h>

#include <map>
#include <string>

#include "base/exit_code.hpp"
#include "config/fault_spec.hpp"
#include "runner/run_preflight.hpp"
#include "targets/target_kind.hpp"

using rlcheck::base::ExitCode;
using rlcheck::base::FatalError;
using rlcheck::targets::check_shared_test;

namespace {

rlcheck::config::Config shared_redis_test() {
  rlcheck::config::Config config;
  config.command = rlcheck::config::Command::drive;
  config.workers.count = 2;
  config.workers.index = 1;
  config.workers.coordinator = "redis://127.0.0.1:1";
  config.workers.session = "s";
  return config;
}

// The refusal check_shared_test throws, or "" when it lets the test go on to join.
std::string refusal(const rlcheck::config::Config& config,
                    const std::map<std::string, std::string>& env = {}) {
  try {
    check_shared_test(config, [&env](const char* name) -> const char* {
      const auto found = env.find(name);
      return found == env.end() ? nullptr : found->second.c_str();
    });
  } catch (const FatalError& error) {
    CHECK(error.code() == ExitCode::usage);
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("run_preflight: a shared redis test needs the Redis named, on the command line or env") {
  rlcheck::config::Config config = shared_redis_test();
  CHECK(refusal(config) == rlcheck::runner::k_private_redis_per_worker);
  CHECK(refusal(config, {{"REDIS_URL", ""}}) == rlcheck::runner::k_private_redis_per_worker);
  CHECK(refusal(config, {{"REDIS_URL", "redis://10.0.0.1:6379"}}).empty());
  config.redis.url = "embedded";
  CHECK(refusal(config, {{"REDIS_URL", "redis://10.0.0.1:6379"}}) ==
        rlcheck::runner::k_private_redis_per_worker);
  config.redis.url = "redis://10.0.0.1:6379";
  CHECK(refusal(config).empty());

  rlcheck::config::Config alone;
  alone.command = rlcheck::config::Command::drive;
  CHECK(refusal(alone).empty());
}

TEST_CASE("run_preflight: a shared test's script and restart fault are refused before joining") {
  rlcheck::config::Config config = shared_redis_test();
  config.redis.url = "redis://10.0.0.1:6379";
  config.redis.strategy = rlcheck::config::Strategy::script;
  config.redis.script_path = "/nonexistent/limiter.lua";
  CHECK(refusal(config) == "--script: cannot read /nonexistent/limiter.lua");

  config = shared_redis_test();
  config.faults.faults.push_back(*rlcheck::config::parse_fault("restart@1s"));
  CHECK(
      refusal(config, {{"REDIS_URL", "redis://10.0.0.1:6379"}}).starts_with("--fault: restart@1s"));
}
