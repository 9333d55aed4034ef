#pragma once

#include "config/config.hpp"

namespace rlcheck::app {

// `rlcheck run FILE...`: every scenario, a summary table (or rlcheck.suite/v1 JSON, JUnit),
// exit 0 when each behaved as it expects, 1 when one did not, 3 when one could not be tested.
// Bad files are usage errors (64) before anything runs.
int run_suite(const config::Config& config);

// What run_suite does before running anything: reads every scenario file and checks its keys
// and values; throws the usage error listing every problem of every file.
void check_suite(const config::Config& config);

}  // namespace rlcheck::app
