#pragma once

#include <optional>
#include <string_view>

#include "config/config.hpp"

namespace rlcheck::config {

// "naive", "incr-expire", "fixed-window", "sliding-window" (alias "lua"), "token-bucket",
// "gcra". Strategy::script has no name of its own (it is spelled --script FILE).
std::optional<Strategy> parse_strategy(std::string_view name);
std::string_view strategy_name(Strategy strategy);
// "naive, incr-expire, ...", for error messages.
std::string_view strategy_names_list();

// The clock a strategy's decisions read when --time-source chose `chosen`: none for those whose
// windows are Redis TTLs (naive, incr-expire, fixed-first-hit) and for --script (it reads what it
// is given); always the client's for fixed-window (its key is named by that clock); `chosen` for
// the Lua scripts that read TIME or their optional now argument; Redis's for leaky-queue.
std::optional<TimeSource> clock_read(Strategy strategy, TimeSource chosen);

// Whether --time-source changes what the strategy reads.
bool time_source_matters(Strategy strategy);
// Whether the built-in strategy counts a request's cost (--cost): the counters by INCRBY, the
// scripts by their last argument. Not the leaky queue (serve's), whose places are requests.
bool strategy_takes_cost(Strategy strategy);

}  // namespace rlcheck::config
