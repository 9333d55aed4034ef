#pragma once
// What each request costs in units (--cost N, --cost A-B, --cost-dist 1:80,10:15,100:5): LLM
// tokens, a GraphQL query's cost, a bulk call's items. Request n's cost is drawn from the
// plan's seed and n alone, so every worker, every rerun and every report agree on it.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlcheck::config {

struct CostPlan {
  // --cost-dist: each cost with its weight; empty: uniform over [low, high] (--cost).
  std::vector<std::pair<int32_t, int64_t>> choices;
  int32_t low = 1;
  int32_t high = 1;
  uint64_t seed = 0;

  // Whether any request costs other than 1.
  bool weighted() const { return !choices.empty() || low != 1 || high != 1; }
  int32_t of(uint64_t seq) const;
  int32_t largest() const;
  double mean() const;
};

// The most one request may cost: its units are each counted by the audits.
inline constexpr int32_t k_max_cost = 1'000'000;

// "N" or "A-B" (uniform). Errors in words that follow the flag name.
std::expected<CostPlan, std::string> parse_cost(std::string_view text);
// "COST:WEIGHT,...": "1:80,10:15,100:5".
std::expected<CostPlan, std::string> parse_cost_dist(std::string_view text);
// As it parses again ("1", "1-10", "1:80,10:15,100:5"), for reports.
std::string format_cost(const CostPlan& plan);

}  // namespace rlcheck::config
