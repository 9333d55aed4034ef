#pragma once
// --stages LIST: the open model's rate over time, as k6's ramping-arrival-rate spells it:
// "30s:100/s,1m:1000/s,30s:0/s". Each stage ramps linearly from the previous target (0 before
// the first) to its own over its duration; "0s:400/s" jumps, "10s:0/s" after a 0 pauses.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace rlcheck::config {

inline constexpr size_t k_max_stages = 100;

// A comma list of 1 to k_max_stages items DURATION:COUNT/PERIOD (duration >= 0, count >= 0,
// a period without a number is one of its unit: 100/s, 6000/m). On error: why, naming the bad
// item, in words that follow the flag name; also when every stage targets 0 or the stages last
// over 100 years together.
std::expected<std::vector<Stage>, std::string> parse_stages(std::string_view text);

// How many requests the stages plan: the whole part of the integral of the rate over them
// (request 0 is due at the start, so a stage of 2s ramping from 0 to 100/s plans 100).
uint64_t planned_requests(const std::vector<Stage>& stages);

// The stages as they parse again: "30s:100/s,1m:1000/s".
std::string format_stages(const std::vector<Stage>& stages);

}  // namespace rlcheck::config
