#include "judging/advertised_params.hpp"

#include <algorithm>
#include <map>
#include <span>

namespace rlcheck::judging {
namespace {

// The value most records carry in `field`; the smaller on a tie.
template <typename Field>
std::optional<int64_t> most_advertised(std::span<const engine::RunResult> results, Field field) {
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

struct LargestReset {
  int64_t reset_s = 0;
  bool from_date = false;  // one that read so was a timestamp read against Date
};

std::optional<LargestReset> largest_allowed_reset(std::span<const engine::RunResult> results) {
  std::optional<LargestReset> largest;
  for (const auto& result : results) {
    for (const auto& record : result.records) {
      if (record.outcome != engine::Outcome::allowed || !record.advertised_reset_s ||
          *record.advertised_reset_s <= 0) {
        continue;
      }
      const int64_t reset = *record.advertised_reset_s;
      if (!largest || reset > largest->reset_s)
        largest = LargestReset{reset, record.reset_from_date};
      else if (reset == largest->reset_s)
        largest->from_date = largest->from_date || record.reset_from_date;
    }
  }
  return largest;
}

}  // namespace

AdvertisedParams read_advertised_params(const std::vector<engine::RunResult>& all, size_t runs) {
  const std::span<const engine::RunResult> results(all.data(), std::min(runs, all.size()));
  AdvertisedParams params;
  params.limit = most_advertised(results, &engine::RequestRecord::advertised_limit);
  if (auto window = most_advertised(results, &engine::RequestRecord::advertised_window_s);
      window && *window > 0) {
    params.window_s = window;
    params.window_basis = AdvertisedParams::WindowBasis::policy;
  } else if (auto reset = largest_allowed_reset(results)) {
    params.window_s = reset->reset_s;
    params.window_basis = AdvertisedParams::WindowBasis::reset;
    if (reset->from_date) {
      for (const int64_t window : {reset->reset_s - 1, reset->reset_s}) {
        if (window > 0)
          params.window_readings_s.push_back(window);
      }
    }
  }
  return params;
}

}  // namespace rlcheck::judging
