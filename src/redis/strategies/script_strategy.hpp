#pragma once
// Limiters written in Lua: the built-in sliding window, token bucket and GCRA, and the
// user's own --script. One EVALSHA per request; the script is atomic on the server.

#include "redis/strategy.hpp"

namespace rlcheck::redis {

std::unique_ptr<Strategy> make_script_strategy(const StrategyParams& params);

}  // namespace rlcheck::redis
