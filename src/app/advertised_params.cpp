#include "app/advertised_params.hpp"

#include <algorithm>
#include <map>

namespace rlcheck::app {
namespace {

// The value most records carry in `field`; the smaller on a tie.
template <typename Field>
std::optional<int64_t> most_advertised(const std::vector<engine::RunResult>& results, Field field) {
  std::map<int64_t, int64_t> votes;
  for (const auto& result : results) {
    for (const auto& record : result.records) {
      if (const std::optional<int64_t>& value = record.*field)
        ++votes[*value];
    }
  }
  if (votes.empty())
    return std::nullopt;
  return std::max_element(votes.begin(), votes.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

std::optional<int64_t> largest_allowed_reset(const std::vector<engine::RunResult>& results) {
  std::optional<int64_t> largest;
  for (const auto& result : results) {
    for (const auto& record : result.records) {
      if (record.outcome == engine::Outcome::allowed && record.advertised_reset_s &&
          *record.advertised_reset_s > 0) {
        largest = std::max(largest.value_or(0), *record.advertised_reset_s);
      }
    }
  }
  return largest;
}

}  // namespace

AdvertisedParams read_advertised_params(const std::vector<engine::RunResult>& results) {
  AdvertisedParams params;
  params.limit = most_advertised(results, &engine::RequestRecord::advertised_limit);
  if (auto window = most_advertised(results, &engine::RequestRecord::advertised_window_s);
      window && *window > 0) {
    params.window_s = window;
    params.window_basis = AdvertisedParams::WindowBasis::policy;
  } else if (auto reset = largest_allowed_reset(results)) {
    params.window_s = reset;
    params.window_basis = AdvertisedParams::WindowBasis::reset;
  }
  return params;
}

}  // namespace rlcheck::app
