#include "config/rate.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace rlcheck::config {

std::expected<Rate, std::string> parse_rate(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return std::unexpected(
        fmt::format("'{}' is not a rate; expected COUNT/DURATION: 5/s, 10/60s", text));
  }
  std::string_view count_text = text.substr(0, slash);
  std::string_view period_text = text.substr(slash + 1);
  Rate rate;
  auto [end, ec] =
      std::from_chars(count_text.data(), count_text.data() + count_text.size(), rate.tokens);
  if (ec != std::errc() || end != count_text.data() + count_text.size() || rate.tokens <= 0) {
    return std::unexpected(fmt::format("'{}': the count must be a whole number above 0", text));
  }
  // "5/s" means five per one second.
  const bool bare_unit =
      !period_text.empty() && std::isalpha(static_cast<unsigned char>(period_text.front()));
  const std::string spelled =
      bare_unit ? fmt::format("1{}", period_text) : std::string(period_text);
  auto period = parse_duration(spelled);
  if (!period)
    return std::unexpected(fmt::format("'{}': the period {}", text, period.error()));
  if (period->count() <= 0)
    return std::unexpected(fmt::format("'{}': the period must be above 0", text));
  rate.period = *period;
  return rate;
}

std::expected<Rate, std::string> parse_refill(std::string_view text) {
  constexpr std::string_view k_steps = ",steps";
  const bool steps = text.ends_with(k_steps);
  auto rate = parse_rate(steps ? text.substr(0, text.size() - k_steps.size()) : text);
  if (rate)
    rate->steps = steps;
  return rate;
}

std::string format_rate(const Rate& rate) {
  // One whole unit is spelled as users type it: 5/s, 10/m (parse_rate reads both forms).
  const std::string period = format_duration(rate.period);
  if (period.size() >= 2 && period.front() == '1' &&
      std::isalpha(static_cast<unsigned char>(period[1])))
    return fmt::format("{}/{}{}", rate.tokens, period.substr(1), rate.steps ? ",steps" : "");
  return fmt::format("{}/{}{}", rate.tokens, period, rate.steps ? ",steps" : "");
}

}  // namespace rlcheck::config
