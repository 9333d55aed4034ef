#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"
#include "redis/endpoint.hpp"

namespace rlcheck::cli {
namespace {

using base::usage_error;

// restart@ acts on the private redis-server only: when the command line already says another
// Redis is used, it is refused here; $REDIS_URL and 127.0.0.1:6379 are known only at connect.
void check_restart(const RawOptions& raw, bool http, const config::FaultSpec& fault) {
  if (http) {
    throw base::usage_error(fmt::format(
        "--fault: {} restarts only the private redis-server rlcheck starts; rlcheck http acts "
        "on --limiter-redis, which rlcheck did not start",
        fault.text));
  }
  if (raw.redis_url && *raw.redis_url != config::k_embedded_url) {
    throw base::usage_error(fmt::format(
        "--fault: {} restarts only the private redis-server rlcheck starts (--redis embedded), "
        "not --redis {}",
        fault.text, *raw.redis_url));
  }
  if (raw.embedded_cluster) {
    throw base::usage_error(fmt::format(
        "--fault: {} restarts only the private redis-server, not --embedded-cluster (use "
        "failover@ on a cluster)",
        fault.text));
  }
}

}  // namespace

void fill_faults(const RawOptions& raw, bool http, config::Config& config) {
  config::FaultConfig& faults = config.faults;
  if (!raw.faults.empty() && config.command == config::Command::compare && http) {
    throw base::usage_error(
        "--fault: compare applies faults to strategies (--strategies), not to --url endpoints; "
        "use rlcheck http URL --fault SPEC --limiter-redis URL");
  }
  for (const std::string& text : raw.faults) {
    auto fault = config::parse_fault(text);
    if (!fault)
      throw base::usage_error(fmt::format("--fault: {}", fault.error()));
    if (fault->kind == config::FaultKind::restart)
      check_restart(raw, http, *fault);
    faults.faults.push_back(std::move(*fault));
  }
  if (raw.limiter_redis) {
    auto endpoint = redis::parse_endpoint(*raw.limiter_redis);
    if (!endpoint)
      throw base::usage_error(fmt::format("--limiter-redis: {}", endpoint.error()));
    if (raw.faults.empty())
      throw base::usage_error(
          "--limiter-redis: only used by --fault (the Redis the faults act on)");
    faults.limiter_redis = raw.limiter_redis;
  }
  if (http && !raw.faults.empty() && !raw.limiter_redis) {
    throw base::usage_error(
        "--fault: rlcheck http needs --limiter-redis URL, the Redis behind the endpoint that "
        "the faults act on");
  }

  config::CheckConfig& checks = config.checks;
  if (raw.expect_fail_mode) {
    if (*raw.expect_fail_mode != "open" && *raw.expect_fail_mode != "closed") {
      throw base::usage_error(fmt::format("--expect-fail-mode: expected open or closed, got '{}'",
                                          *raw.expect_fail_mode));
    }
    if (raw.faults.empty())
      throw base::usage_error(
          "--expect-fail-mode: needs --fault (what the limiter must fail through)");
    checks.expect_fail_mode = raw.expect_fail_mode;
  }
  if (raw.recovery) {
    auto recovery = config::parse_duration(*raw.recovery);
    if (!recovery)
      throw base::usage_error(fmt::format("--recovery: {}", recovery.error()));
    if (recovery->count() <= 0)
      throw base::usage_error(fmt::format("--recovery: must be above 0, got {}", *raw.recovery));
    if (raw.faults.empty())
      throw base::usage_error("--recovery: needs --fault (what the limiter must recover from)");
    checks.recovery = *recovery;
  }
}

}  // namespace rlcheck::cli
