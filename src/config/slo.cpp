#include "config/slo.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "config/comma_list.hpp"

namespace rlcheck::config {
namespace {

constexpr size_t k_max_bounds = 8;

std::expected<SloBound, std::string> parse_bound(std::string_view item) {
  const size_t less = item.find('<');
  if (item.size() < 2 || item.front() != 'p' || less == std::string_view::npos) {
    return std::unexpected(fmt::format(
        "'{}' is not a bound; expected a percentile and a latency, e.g. p99<10ms", item));
  }
  const std::string_view number = item.substr(1, less - 1);
  double percentile = 0;
  const auto [end, error] =
      std::from_chars(number.data(), number.data() + number.size(), percentile);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(percentile)) {
    return std::unexpected(fmt::format("'{}': '{}' is not a percentile", item, number));
  }
  if (percentile <= 0 || percentile >= 100) {
    return std::unexpected(fmt::format("'{}': the percentile must be above 0 and below 100", item));
  }
  auto bound = parse_duration(item.substr(less + 1));
  if (!bound)
    return std::unexpected(fmt::format("'{}': {}", item, bound.error()));
  if (bound->count() <= 0)
    return std::unexpected(fmt::format("'{}': the bound must be above 0", item));
  return SloBound{percentile, *bound};
}

}  // namespace

std::expected<std::vector<SloBound>, std::string> parse_slo(std::string_view text) {
  return parse_comma_list(text, k_max_bounds,
                          "empty item in the list; expected bounds such as p99<10ms,p50<2ms",
                          fmt::format("more than {} bounds", k_max_bounds), parse_bound);
}

std::string format_slo_bound(const SloBound& bound) {
  return fmt::format("p{}<{}", bound.percentile, format_duration(bound.bound));
}

std::string format_slo(const std::vector<SloBound>& slo) {
  std::string text;
  for (const SloBound& bound : slo)
    text += (text.empty() ? "" : ",") + format_slo_bound(bound);
  return text;
}

}  // namespace rlcheck::config
