#pragma once
// The names of --reply's formats.

#include <optional>
#include <string_view>

#include "config/config.hpp"

namespace rlcheck::config {

// "contract", "counter", "cell", "rate", "count".
std::optional<ReplyFormat> parse_reply_format(std::string_view name);
std::string_view reply_format_name(ReplyFormat format);
// "contract, counter, cell, rate, count", for error messages.
std::string_view reply_format_names_list();

}  // namespace rlcheck::config
