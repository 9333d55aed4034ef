#pragma once
// --clock-skew LIST: how far each client's clock is off, as app servers' clocks disagree.
// "0,+500ms,-250ms": signed durations (a bare 0 needs no unit); connection c adds offset c mod
// count to the time its requests read ({now_ms}, {now_s}, a fixed window's index).

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.hpp"

namespace rlcheck::config {

// More offsets than this is a typo, not a fleet of app servers (records keep the index in a
// few bits).
inline constexpr size_t k_max_clock_skews = 16;

// A comma list of 1 to k_max_clock_skews items, each a duration (parse_duration) with an
// optional leading + or -, or a bare 0. On error: why, naming the bad item, in words that
// follow the flag name.
std::expected<std::vector<Nanos>, std::string> parse_clock_skews(std::string_view text);

// One offset as the reports name it: "0ms", "+800ms", "-1.5s".
std::string format_clock_skew(Nanos skew);

// The list as it parses again: "0,+800ms".
std::string format_clock_skews(const std::vector<Nanos>& skews);

// The offsets in whole milliseconds, as reports and records show them.
std::vector<int64_t> clock_skews_ms(const std::vector<Nanos>& skews);

}  // namespace rlcheck::config
