#include "config/cost_plan.hpp"

#include <charconv>
#include <optional>

#include <fmt/format.h>

namespace rlcheck::config {
namespace {

// splitmix64: a well-mixed 64-bit value from the seed and the request number.
uint64_t cost_mix(uint64_t seed, uint64_t seq) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (seq + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::optional<int64_t> whole_value(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    return std::nullopt;
  return value;
}

std::expected<int32_t, std::string> cost_value(std::string_view text) {
  const auto value = whole_value(text);
  if (!value || *value < 1 || *value > k_max_cost) {
    return std::unexpected(
        fmt::format("'{}' is not a cost: a whole number from 1 to {}", text, k_max_cost));
  }
  return static_cast<int32_t>(*value);
}

}  // namespace

int32_t CostPlan::of(uint64_t seq) const {
  if (!weighted())
    return 1;
  const uint64_t draw = cost_mix(seed, seq);
  if (choices.empty()) {
    const auto span = static_cast<uint64_t>(high - low) + 1;
    return low + static_cast<int32_t>(draw % span);
  }
  int64_t total = 0;
  for (const auto& [cost, weight] : choices)
    total += weight;
  auto point = static_cast<int64_t>(draw % static_cast<uint64_t>(total));
  for (const auto& [cost, weight] : choices) {
    if (point < weight)
      return cost;
    point -= weight;
  }
  return choices.back().first;
}

int32_t CostPlan::largest() const {
  int32_t most = high;
  for (const auto& [cost, weight] : choices)
    most = std::max(most, cost);
  return choices.empty() ? high : most;
}

double CostPlan::mean() const {
  if (choices.empty())
    return (static_cast<double>(low) + static_cast<double>(high)) / 2;
  double total = 0, weights = 0;
  for (const auto& [cost, weight] : choices) {
    total += static_cast<double>(cost) * static_cast<double>(weight);
    weights += static_cast<double>(weight);
  }
  return total / weights;
}

std::expected<CostPlan, std::string> parse_cost(std::string_view text) {
  CostPlan plan;
  const size_t dash = text.find('-');
  const auto low = cost_value(text.substr(0, dash));
  if (!low)
    return std::unexpected(low.error());
  plan.low = plan.high = *low;
  if (dash != std::string_view::npos) {
    const auto high = cost_value(text.substr(dash + 1));
    if (!high)
      return std::unexpected(high.error());
    if (*high < *low)
      return std::unexpected(fmt::format("'{}': the range goes from low to high", text));
    plan.high = *high;
  }
  return plan;
}

std::expected<CostPlan, std::string> parse_cost_dist(std::string_view text) {
  CostPlan plan;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return std::unexpected(fmt::format("'{}' needs COST:WEIGHT, e.g. 1:80,10:15,100:5", item));
    }
    const auto cost = cost_value(item.substr(0, colon));
    if (!cost)
      return std::unexpected(cost.error());
    const auto weight = whole_value(item.substr(colon + 1));
    if (!weight || *weight < 1 || *weight > 1'000'000) {
      return std::unexpected(fmt::format("'{}' is not a weight: a whole number from 1 to 1000000",
                                         item.substr(colon + 1)));
    }
    plan.choices.emplace_back(*cost, *weight);
  }
  if (plan.choices.empty())
    return std::unexpected("needs COST:WEIGHT pairs, e.g. 1:80,10:15,100:5");
  return plan;
}

std::string format_cost(const CostPlan& plan) {
  if (plan.choices.empty())
    return plan.low == plan.high ? fmt::format("{}", plan.low)
                                 : fmt::format("{}-{}", plan.low, plan.high);
  std::string text;
  for (const auto& [cost, weight] : plan.choices)
    text += fmt::format("{}{}:{}", text.empty() ? "" : ",", cost, weight);
  return text;
}

}  // namespace rlcheck::config
