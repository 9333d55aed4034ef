#include "http/status_set.hpp"

#include <charconv>

#include <fmt/format.h>

namespace rlcheck::http {
namespace {

std::expected<int, std::string> status_of(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 100 ||
      value > 599) {
    return std::unexpected(fmt::format("'{}' is not a status 100-599", text));
  }
  return value;
}

}  // namespace

std::expected<StatusSet, std::string> StatusSet::parse(std::string_view text) {
  StatusSet statuses;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos)
      comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    const size_t dash = item.find('-');
    auto low = status_of(item.substr(0, dash));
    if (!low)
      return std::unexpected(low.error());
    auto high = dash == std::string_view::npos ? low : status_of(item.substr(dash + 1));
    if (!high)
      return std::unexpected(high.error());
    if (*high < *low)
      return std::unexpected(fmt::format("'{}' is an empty range", item));
    for (int status = *low; status <= *high; ++status)
      statuses.set_.set(status);
    start = comma + 1;
  }
  return statuses;
}

}  // namespace rlcheck::http
