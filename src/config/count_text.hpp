#pragma once
// A count with its noun for human text: "1 run", "4 runs", "1 request", "0 scenarios".

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace rlcheck::config {

// `plural` defaults to `singular` + "s".
inline std::string counted(int64_t count, std::string_view singular, std::string_view plural = {}) {
  if (count == 1 || count == -1)
    return fmt::format("{} {}", count, singular);
  return plural.empty() ? fmt::format("{} {}s", count, singular)
                        : fmt::format("{} {}", count, plural);
}

}  // namespace rlcheck::config
