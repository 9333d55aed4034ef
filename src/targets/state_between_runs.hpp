#pragma once
// What the kinds whose limiter state rlcheck cannot reach itself (an HTTP endpoint, a gRPC
// service) share: the pause and the reset command before each run (--between-runs,
// --reset-cmd), and the Redis behind the target that --fault acts on (--limiter-redis).

#include <chrono>
#include <string>

#include "config/config.hpp"
#include "faults/fault_applier.hpp"

namespace rlcheck::targets {

// Before run `run`: the pause (not before the first run; virtual under --virtual-clock), then
// (`leader`, many hosts: worker 0) the reset command, stopped after 60 s. False when Ctrl-C came
// first; throws FatalError(cannot_test) when the command fails.
bool prepare_state(const config::Config& config, config::Nanos between_runs,
                   const std::string& reset_cmd, int run, bool leader);

// Why the state a run meets may be an earlier test's (runner::Judging::state_note), for a
// target whose requests carry {run} or {id} (`placeholders`) or neither.
std::string earlier_state_note(bool placeholders);

// --limiter-redis, reachable (throws FatalError naming the flag otherwise); no endpoint when it
// was not given.
faults::FaultedRedis limiter_redis_faulted(const config::Config& config);

}  // namespace rlcheck::targets
