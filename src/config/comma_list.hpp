#pragma once
// The comma lists the flags take (--stages, --slo, --clock-skew): items split on ',', each
// parsed on its own; the first item that does not parse is the list's error.

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rlcheck::config {

// `parse_item(std::string_view)` returns std::expected<T, std::string>. An empty item is
// refused with `empty_item`, an item past `max_items` with `too_many`.
template <typename ParseItem>
auto parse_comma_list(std::string_view text, size_t max_items, std::string_view empty_item,
                      std::string_view too_many, ParseItem&& parse_item)
    -> std::expected<
        std::vector<typename std::invoke_result_t<ParseItem&, std::string_view>::value_type>,
        std::string> {
  std::vector<typename std::invoke_result_t<ParseItem&, std::string_view>::value_type> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos)
      comma = text.size();
    const std::string_view item = text.substr(start, comma - start);
    if (item.empty())
      return std::unexpected(std::string(empty_item));
    if (items.size() == max_items)
      return std::unexpected(std::string(too_many));
    auto parsed = parse_item(item);
    if (!parsed)
      return std::unexpected(parsed.error());
    items.push_back(std::move(*parsed));
    start = comma + 1;
  }
  return items;
}

}  // namespace rlcheck::config
