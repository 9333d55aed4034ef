#include "targets/state_between_runs.hpp"

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "engine/interrupt.hpp"
#include "process/child_process.hpp"
#include "redis/endpoint.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::targets {
namespace {

constexpr auto k_reset_cmd_limit = std::chrono::seconds(60);

// --reset-cmd, stopped (and its process group with it) when Ctrl-C comes first. False when
// interrupted.
bool run_reset_cmd(const std::string& command) {
  auto child = process::ChildProcess::spawn({"/bin/sh", "-c", command},
                                            process::ChildProcess::Stderr::inherit);
  if (!child)
    throw base::cannot_test(fmt::format("--reset-cmd: {}", child.error()));
  const auto deadline = std::chrono::steady_clock::now() + k_reset_cmd_limit;
  while (!engine::interrupted()) {
    if (auto status = child->wait_for(engine::k_interrupt_poll)) {
      if (*status != 0) {
        throw base::cannot_test(
            fmt::format("--reset-cmd: '{}' exited with status {}", command, *status));
      }
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw base::cannot_test(
          fmt::format("--reset-cmd: still running after {}s; stopped", k_reset_cmd_limit.count()));
    }
  }
  return false;  // the child is stopped as it goes out of scope
}

}  // namespace

bool prepare_state(const config::Config& config, config::Nanos between_runs,
                   const std::string& reset_cmd, int run, bool leader) {
  // Under the virtual clock the pause is virtual too: the next run starts that much later.
  if (run > 1 && between_runs.count() > 0 && !config.load.virtual_clock &&
      !engine::wait_until(std::chrono::steady_clock::now() + between_runs)) {
    return false;
  }
  return !leader || reset_cmd.empty() || run_reset_cmd(reset_cmd);
}

std::string earlier_state_note(bool placeholders) {
  const char* vouch = "--reset-cmd clears it before each run, --exact vouches that it is fresh";
  if (placeholders) {
    return fmt::format(
        "{{run}} and {{id}} are the same in every invocation of this command, so an earlier test "
        "within the window may have used the identity up; {}",
        vouch);
  }
  return fmt::format("every invocation of this command speaks for the same identity; {}", vouch);
}

faults::FaultedRedis limiter_redis_faulted(const config::Config& config) {
  faults::FaultedRedis target;
  target.timeout = config.load.timeout;
  if (!config.faults.limiter_redis)
    return target;
  auto endpoint = redis::parse_endpoint(*config.faults.limiter_redis);
  if (!endpoint)
    throw base::usage_error(fmt::format("--limiter-redis: {}", endpoint.error()));
  if (endpoint->tls)
    endpoint->tls_options = config.tls;
  target.endpoint = std::move(*endpoint);
  if (auto client = redis::SyncClient::connect(target.endpoint, target.timeout); !client)
    throw base::cannot_test(fmt::format("--limiter-redis: {}", client.error()));
  return target;
}

}  // namespace rlcheck::targets
