#pragma once
// Limiters written in Lua: the built-in sliding window, token bucket and GCRA, and the
// user's own --script. One EVALSHA per request; the script is atomic on the server.

#include <string>
#include <vector>

#include "redis/strategy.hpp"

namespace rlcheck::redis {

std::unique_ptr<Strategy> make_script_strategy(const StrategyParams& params);

// The ARGV templates a strategy's script is called with: a built-in's, in the order its header
// documents (plus {now_ms} last when its time source is the client), else --arg's.
std::vector<std::string> builtin_arg_templates(const StrategyParams& params);

}  // namespace rlcheck::redis
