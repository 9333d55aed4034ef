#pragma once

#include <vector>

#include "app/hook.hpp"
#include "config/config.hpp"

namespace rlcheck::app {

// `rlcheck run FILE...`: every scenario, a summary table (or rlcheck.suite/v1 JSON, JUnit),
// exit 0 when each behaved as it expects, 1 when one did not, 3 when one could not be tested.
// Bad files are usage errors (64) before anything runs.
// With --hook, `hook` is what the hook run knows (--hook-max-blocks, the deadline).
int run_suite(const config::Config& config, const HookContext& hook = {});

// What run_suite does before running anything: reads every scenario file and checks its keys
// and values; throws the usage error listing every problem of every file. Returns each
// scenario's configuration, in the order they would run.
std::vector<config::Config> check_suite(const config::Config& config);

}  // namespace rlcheck::app
