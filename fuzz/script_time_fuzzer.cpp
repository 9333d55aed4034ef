// Fuzzes the scan for TIME in a Lua limiter script (what --virtual-clock refuses): any text,
// unterminated strings, comments and long brackets included. The line it names must exist.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "redis/script_time.hpp"

namespace {
constexpr std::string_view k_time = "TIME";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view lua(reinterpret_cast<const char*>(data), size);
  if (const auto line = rlcheck::redis::line_calling_time(lua); line) {
    const auto lines = std::count(lua.begin(), lua.end(), '\n') + 1;
    if (*line < 1 || *line > lines)
      __builtin_trap();  // a 1-based line of the script
    // Some literal's text is TIME: the shortest script is 'TIME with an unterminated quote.
    const auto time_at = std::search(
        lua.begin(), lua.end(), k_time.begin(), k_time.end(),
        [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; });
    if (size < 5 || time_at == lua.end())
      __builtin_trap();
  }
  return 0;
}
