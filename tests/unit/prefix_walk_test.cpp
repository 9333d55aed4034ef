#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "checks/prefix_walk.hpp"

using rlcheck::checks::prefix_from;

TEST_CASE("a walked prefix count is the searched one, from any guess") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    // Ties included: values from a narrow range.
    std::vector<int64_t> sorted(rng() % 60);
    for (int64_t& value : sorted)
      value = static_cast<int64_t>(rng() % 40);
    std::sort(sorted.begin(), sorted.end());
    size_t at = rng() % (sorted.size() + 3);  // a guess, even past the end
    for (int query = 0; query < 50; ++query) {
      // Mostly near the last query, now and then far.
      const auto bound = static_cast<int64_t>(rng() % 44) - 2;
      const auto below = [&](int64_t value) { return value < bound; };
      const auto searched = static_cast<size_t>(
          std::partition_point(sorted.begin(), sorted.end(), below) - sorted.begin());
      at = prefix_from(at, sorted, below);
      CHECK(at == searched);
    }
  }
}
