#include "config/duration.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace rlcheck::config {
namespace {

struct Unit {
  std::string_view suffix;
  double nanos;
};

// Longest suffixes first so "ms" is not read as "m" followed by garbage.
constexpr std::array<Unit, 7> k_units{{{"ns", 1.0},
                                       {"us", 1e3},
                                       {"ms", 1e6},
                                       {"s", 1e9},
                                       {"m", 60e9},
                                       {"h", 3600e9},
                                       {"d", 86400e9}}};

// `value` / `scale` (a power of ten) in decimal, exactly and without trailing zeros:
// (1'500, 1'000) is "1.5". Printing a double instead cut long durations to six digits
// ("1.14645e+08s"), which no longer parsed.
std::string exact_decimal(int64_t value, int64_t scale, int scale_digits) {
  std::string text = fmt::format("{}", value / scale);
  if (const int64_t fraction = value % scale; fraction != 0) {
    std::string digits = fmt::format("{:0{}}", fraction, scale_digits);
    digits.erase(digits.find_last_not_of('0') + 1);
    text += "." + digits;
  }
  return text;
}

}  // namespace

std::expected<Nanos, std::string> parse_duration(std::string_view text) {
  if (text.empty()) {
    return std::unexpected("is empty; expected a duration such as 60s, 500ms, 1m");
  }
  size_t digits_end = 0;
  while (digits_end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits_end])) || text[digits_end] == '.')) {
    ++digits_end;
  }
  std::string_view number = text.substr(0, digits_end);
  std::string_view suffix = text.substr(digits_end);
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
    return std::unexpected(
        fmt::format("'{}' is not a duration; expected a number and a unit: 60s, 500ms, 1m", text));
  }
  if (suffix.empty()) {
    return std::unexpected(
        fmt::format("'{}' needs a unit: {}s, {}ms, {}m", text, text, text, text));
  }
  for (const Unit& unit : k_units) {
    if (suffix == unit.suffix) {
      double nanos = value * unit.nanos;
      if (!std::isfinite(nanos) || nanos > 1e18) {
        return std::unexpected(fmt::format("'{}' is too long", text));
      }
      return Nanos(static_cast<int64_t>(std::llround(nanos)));
    }
  }
  return std::unexpected(
      fmt::format("'{}' has an unknown unit '{}'; use ns, us, ms, s, m, h or d", text, suffix));
}

std::string format_duration(Nanos d) {
  const int64_t ns = d.count();
  if (ns != 0 && ns % 3'600'000'000'000 == 0)
    return fmt::format("{}h", ns / 3'600'000'000'000);
  if (ns != 0 && ns % 60'000'000'000 == 0 && ns < 3'600'000'000'000) {
    return fmt::format("{}m", ns / 60'000'000'000);
  }
  if (ns >= 1'000'000'000)
    return exact_decimal(ns, 1'000'000'000, 9) + "s";
  if (ns >= 1'000'000)
    return exact_decimal(ns, 1'000'000, 6) + "ms";
  if (ns >= 1'000)
    return exact_decimal(ns, 1'000, 3) + "us";
  return fmt::format("{}ns", ns);
}

}  // namespace rlcheck::config
