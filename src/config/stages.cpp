#include "config/stages.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "config/comma_list.hpp"

namespace rlcheck::config {
namespace {

// Durations over 100 years would overflow the schedule's 64-bit nanosecond instants.
constexpr long double k_longest_stages_ns = 100.0L * 365 * 24 * 3600 * 1e9;
constexpr double k_highest_stage_rate = 1e9;  // per second: a typo, not a load

std::unexpected<std::string> refuse_stage(std::string_view item, const std::string& why) {
  return std::unexpected(fmt::format("'{}': {}", item, why));
}

std::expected<Stage, std::string> parse_stage(std::string_view item) {
  const size_t colon = item.find(':');
  if (colon == std::string_view::npos)
    return refuse_stage(item, "expected DURATION:COUNT/PERIOD, e.g. 30s:100/s");
  auto duration = parse_duration(item.substr(0, colon));
  if (!duration)
    return refuse_stage(item, fmt::format("the duration {}", duration.error()));
  if (duration->count() < 0)
    return refuse_stage(item, "the duration must be at least 0");
  const std::string_view rate_text = item.substr(colon + 1);
  const size_t slash = rate_text.find('/');
  if (slash == std::string_view::npos)
    return refuse_stage(item, "the target must be a rate COUNT/PERIOD, e.g. 100/s");
  const std::string_view count_text = rate_text.substr(0, slash);
  double count = 0;
  auto [end, ec] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
  if (count_text.empty() || ec != std::errc() || end != count_text.data() + count_text.size() ||
      !std::isfinite(count) || count < 0) {
    return refuse_stage(item, "the count must be a number at least 0");
  }
  const std::string_view period_text = rate_text.substr(slash + 1);
  const bool bare_unit =
      !period_text.empty() && std::isalpha(static_cast<unsigned char>(period_text.front()));
  auto period =
      parse_duration(bare_unit ? fmt::format("1{}", period_text) : std::string(period_text));
  if (!period)
    return refuse_stage(item, fmt::format("the period {}", period.error()));
  if (period->count() <= 0)
    return refuse_stage(item, "the period must be above 0");
  Stage stage;
  stage.duration = *duration;
  stage.to_per_s = count * 1e9 / static_cast<double>(period->count());
  if (stage.to_per_s > k_highest_stage_rate)
    return refuse_stage(item,
                        fmt::format("more than {:.0f} requests a second", k_highest_stage_rate));
  return stage;
}

}  // namespace

std::expected<std::vector<Stage>, std::string> parse_stages(std::string_view text) {
  if (text.empty())
    return std::unexpected("is empty; expected DURATION:RATE,... such as 30s:100/s,1m:0/s");
  auto parsed = parse_comma_list(text, k_max_stages, "an empty stage in the list",
                                 fmt::format("at most {} stages", k_max_stages), parse_stage);
  if (!parsed)
    return parsed;
  std::vector<Stage>& stages = *parsed;
  long double total_ns = 0;
  for (const Stage& stage : stages)
    total_ns += static_cast<long double>(stage.duration.count());
  if (total_ns > k_longest_stages_ns)
    return std::unexpected("the stages last over 100 years together");
  bool any_load = false;
  for (const Stage& stage : stages)
    any_load = any_load || stage.to_per_s > 0;
  if (!any_load)
    return std::unexpected(fmt::format("'{}': every stage targets 0, nothing is sent", text));
  return stages;
}

uint64_t planned_requests(const std::vector<Stage>& stages) {
  long double planned = 0;
  double from = 0;
  for (const Stage& stage : stages) {
    planned += (static_cast<long double>(from) + stage.to_per_s) / 2 *
               static_cast<long double>(stage.duration.count()) / 1e9L;
    from = stage.to_per_s;
  }
  // A whole count reached up to rounding (2s from 0 to 100/s) counts as reached.
  return static_cast<uint64_t>(std::floor(planned + 1e-6L));
}

std::string format_stages(const std::vector<Stage>& stages) {
  std::string text;
  for (const Stage& stage : stages) {
    if (!text.empty())
      text += ',';
    text += fmt::format("{}:{}/s", format_duration(stage.duration), stage.to_per_s);
  }
  return text;
}

}  // namespace rlcheck::config
