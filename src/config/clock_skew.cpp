#include "config/clock_skew.hpp"

#include <fmt/format.h>

#include "config/comma_list.hpp"

namespace rlcheck::config {
namespace {

std::expected<Nanos, std::string> parse_item(std::string_view item) {
  bool negative = false;
  std::string_view magnitude = item;
  if (!magnitude.empty() && (magnitude.front() == '+' || magnitude.front() == '-')) {
    negative = magnitude.front() == '-';
    magnitude.remove_prefix(1);
  }
  if (magnitude == "0")
    return Nanos(0);
  auto parsed = parse_duration(magnitude);
  if (!parsed) {
    if (magnitude.empty())
      return std::unexpected(fmt::format("'{}' has a sign but no duration", item));
    return std::unexpected(parsed.error());
  }
  return negative ? -*parsed : *parsed;
}

}  // namespace

std::expected<std::vector<Nanos>, std::string> parse_clock_skews(std::string_view text) {
  return parse_comma_list(
      text, k_max_clock_skews, "empty item in the list; expected offsets such as 0,+500ms,-250ms",
      fmt::format("more than {} offsets (connection c takes offset c mod count)",
                  k_max_clock_skews),
      parse_item);
}

std::string format_clock_skew(Nanos skew) {
  if (skew.count() == 0)
    return "0ms";
  return fmt::format("{}{}", skew.count() < 0 ? "-" : "+",
                     format_duration(skew < Nanos(0) ? -skew : skew));
}

std::string format_clock_skews(const std::vector<Nanos>& skews) {
  std::string text;
  for (const Nanos skew : skews)
    text += (text.empty() ? "" : ",") +
            (skew.count() == 0 ? std::string("0") : format_clock_skew(skew));
  return text;
}

std::vector<int64_t> clock_skews_ms(const std::vector<Nanos>& skews) {
  std::vector<int64_t> ms;
  for (const Nanos skew : skews)
    ms.push_back(to_milliseconds(skew));
  return ms;
}

}  // namespace rlcheck::config
