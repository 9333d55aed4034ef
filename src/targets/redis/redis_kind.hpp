#pragma once
// `rlcheck redis`: a Redis limiter driven directly (a built-in strategy or --script), and
// compare's strategies and scripts.

#include "targets/target_kind.hpp"

namespace rlcheck::targets {

TargetKind redis_kind();

}  // namespace rlcheck::targets
