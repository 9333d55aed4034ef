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

}  // namespace rlcheck::config
