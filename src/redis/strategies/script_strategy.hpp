#pragma once
// Limiters written in Lua: the built-in sliding window, token bucket and GCRA, and the
// user's own --script. One EVALSHA per request; the script is atomic on the server.

#include <string>
#include <string_view>
#include <vector>

#include "redis/strategy.hpp"

namespace rlcheck::redis {

std::unique_ptr<Strategy> make_script_strategy(const StrategyParams& params);

// The ARGV templates a strategy's script is called with: a built-in's, in the order its header
// documents (plus {now_ms} last when its time source is the client), else --arg's.
std::vector<std::string> builtin_arg_templates(const StrategyParams& params);

// The concurrency strategy's member for a request (lua/concurrency.lua's ARGV[3]): what
// acquires a place and what releases it (serve) must spell it alike.
std::string concurrency_member(std::string_view instance_id, std::string_view run,
                               std::string_view seq);

}  // namespace rlcheck::redis
