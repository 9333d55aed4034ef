#pragma once
// The length of the prefix of a sorted range whose elements satisfy a predicate, found from a
// neighbouring query's answer: an audit visiting denials in send order asks for counts that
// move a step or two from one denial to the next, so walking there beats a binary search.
// Far moves (a denial that queued long among many admissions) fall back to one.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace rlcheck::checks {

// `counts` holds for a prefix of `sorted` and for nothing after it; `at` is a guess.
template <typename T, typename Counts>
size_t prefix_from(size_t at, const std::vector<T>& sorted, const Counts& counts) {
  constexpr int k_most_steps = 16;
  at = std::min(at, sorted.size());
  for (int step = 0; step < k_most_steps; ++step) {
    if (at < sorted.size() && counts(sorted[at])) {
      ++at;
    } else if (at > 0 && !counts(sorted[at - 1])) {
      --at;
    } else {
      return at;
    }
  }
  return static_cast<size_t>(std::partition_point(sorted.begin(), sorted.end(), counts) -
                             sorted.begin());
}

}  // namespace rlcheck::checks
