#pragma once
// `rlcheck probe --redis`: identity i is a fresh key under rlcheck:<id>:probe:, deleted at the
// end.

#include <memory>

#include "config/config.hpp"
#include "probe/probe_sender.hpp"

namespace rlcheck::targets {

// Throws FatalError(cannot_test) when Redis cannot be reached or the script not loaded.
std::unique_ptr<probe::ProbeSender> make_redis_probe_sender(const config::Config& config);

}  // namespace rlcheck::targets
