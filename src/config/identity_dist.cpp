#include "config/identity_dist.hpp"

#include <charconv>
#include <optional>

#include <fmt/format.h>

namespace rlcheck::config {
namespace {

constexpr std::string_view k_identity_dist_forms = "uniform, zipf:S or hot:P";

// A plain decimal: digits with at most one point, no sign, no exponent, no inf or nan.
std::optional<double> plain_decimal(std::string_view text) {
  if (text.empty() || text.size() > 32 || text == ".")
    return std::nullopt;
  int points = 0;
  for (const char c : text) {
    if (c == '.')
      ++points;
    else if (c < '0' || c > '9')
      return std::nullopt;
  }
  if (points > 1)
    return std::nullopt;
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

// The shortest plain decimal that reads back as `value` (never an exponent).
std::string decimal_text(double value) {
  char text[400];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed);
  return ec == std::errc() ? std::string(text, end) : fmt::format("{}", value);
}

}  // namespace

std::expected<IdentityDist, std::string> parse_identity_dist(std::string_view text) {
  if (text == "uniform")
    return IdentityDist{};
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  if (colon == std::string_view::npos || (name != "zipf" && name != "hot")) {
    return std::unexpected(fmt::format("expected {}, got '{}'", k_identity_dist_forms, text));
  }
  const std::string_view number = text.substr(colon + 1);
  const std::optional<double> value = plain_decimal(number);
  if (name == "zipf") {
    if (!value) {
      return std::unexpected(
          fmt::format("zipf:S needs the exponent S as a decimal such as 1.1, got '{}'", number));
    }
    if (*value <= 0 || *value > k_max_zipf_exponent) {
      return std::unexpected(fmt::format("zipf:S needs S above 0 and at most {}, got {}",
                                         k_max_zipf_exponent, number));
    }
    return IdentityDist{IdentityShape::zipf, *value};
  }
  if (!value) {
    return std::unexpected(fmt::format(
        "hot:P needs the hot identity's share P as a decimal such as 0.3, got '{}'", number));
  }
  if (*value <= 0 || *value >= 1)
    return std::unexpected(fmt::format("hot:P needs P above 0 and below 1, got {}", number));
  return IdentityDist{IdentityShape::hot, *value};
}

std::string format_identity_dist(const IdentityDist& dist) {
  switch (dist.shape) {
    case IdentityShape::zipf:
      return "zipf:" + decimal_text(dist.parameter);
    case IdentityShape::hot:
      return "hot:" + decimal_text(dist.parameter);
    case IdentityShape::uniform:
      break;
  }
  return "uniform";
}

}  // namespace rlcheck::config
