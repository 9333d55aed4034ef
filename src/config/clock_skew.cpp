#include "config/clock_skew.hpp"

#include <fmt/format.h>

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
  std::vector<Nanos> skews;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos)
      comma = text.size();
    const std::string_view item = text.substr(start, comma - start);
    if (item.empty())
      return std::unexpected("empty item in the list; expected offsets such as 0,+500ms,-250ms");
    if (skews.size() == k_max_clock_skews) {
      return std::unexpected(fmt::format(
          "more than {} offsets (connection c takes offset c mod count)", k_max_clock_skews));
    }
    auto skew = parse_item(item);
    if (!skew)
      return std::unexpected(skew.error());
    skews.push_back(*skew);
    start = comma + 1;
  }
  return skews;
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
