#pragma once
// Durations as the command line spells them: "60s", "500ms", "1m", "1h", "250us", "1.5s".

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace rlcheck::config {

using Nanos = std::chrono::nanoseconds;

// Parses "<number><unit>" with unit one of ns, us, ms, s, m, h. A bare number has no unit and
// is rejected: "60" could mean seconds or milliseconds. On error, says what is wrong in words
// that follow the flag name ("needs a unit: ...").
std::expected<Nanos, std::string> parse_duration(std::string_view text);

// Whole milliseconds (truncated), as Redis arguments and reports use them.
inline int64_t to_milliseconds(Nanos d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// Shortest exact spelling for reports: 60s, 1.5s, 500ms, 2m, 1h.
std::string format_duration(Nanos d);

}  // namespace rlcheck::config
