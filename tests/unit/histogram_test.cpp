#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "engine/histogram.hpp"

using rlcheck::engine::Histogram;

namespace {

// The exact p-th order statistic: the smallest recorded value such that at least p % of the
// values are <= it.
int64_t exact_percentile(std::vector<int64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  size_t rank = 1;
  while (static_cast<double>(rank) * 100.0 < p * static_cast<double>(n))
    ++rank;
  return values[rank - 1];
}

// Values over several orders of magnitude, reproducibly.
std::vector<int64_t> spread_values(uint64_t seed, size_t count) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> values;
  for (size_t i = 0; i < count; ++i) {
    const int magnitude = static_cast<int>(rng() % 40);  // up to ~2^40 ns
    values.push_back(static_cast<int64_t>(rng() % (uint64_t{1} << magnitude)) + 1);
  }
  return values;
}

const double k_percentiles[] = {0.1, 1, 5, 10, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 100};

}  // namespace

TEST_CASE("an empty histogram reports zeros") {
  Histogram h;
  CHECK(h.count() == 0);
  CHECK(h.min() == 0);
  CHECK(h.max() == 0);
  CHECK(h.percentile(50) == 0);
  CHECK(h.percentile(100) == 0);
}

TEST_CASE("min, max and count follow the recorded values") {
  Histogram h;
  for (int64_t v : {500'000, 7, 123'456'789, 42})
    h.record(v);
  CHECK(h.count() == 4);
  CHECK(h.min() == 7);
  CHECK(h.max() == 123'456'789);
}

TEST_CASE("negative values are recorded as 0") {
  Histogram h;
  h.record(-5);
  h.record(10);
  CHECK(h.count() == 2);
  CHECK(h.min() == 0);
  CHECK(h.percentile(50) == 0);
  CHECK(h.percentile(100) == 10);
}

TEST_CASE("values below 128 are counted exactly") {
  Histogram h;
  std::vector<int64_t> values;
  for (int64_t v = 0; v < 128; ++v) {
    h.record(v);
    values.push_back(v);
  }
  for (double p : k_percentiles) {
    CAPTURE(p);
    CHECK(h.percentile(p) == exact_percentile(values, p));
  }
}

TEST_CASE("a single value is every percentile of itself") {
  Histogram h;
  h.record(1'000'003);
  CHECK(h.percentile(1) == 1'000'003);
  CHECK(h.percentile(50) == 1'000'003);
  CHECK(h.percentile(100) == 1'000'003);
}

TEST_CASE("percentile never understates and overstates by less than 1/64") {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const auto values = spread_values(seed, 5000);
    Histogram h;
    for (int64_t v : values)
      h.record(v);
    for (double p : k_percentiles) {
      CAPTURE(seed);
      CAPTURE(p);
      const int64_t exact = exact_percentile(values, p);
      const int64_t got = h.percentile(p);
      CHECK(got >= exact);
      CHECK(static_cast<double>(got - exact) < static_cast<double>(exact) / 64.0 + 1e-9);
      CHECK(got <= h.max());
    }
  }
}

TEST_CASE("values in one bucket report an upper edge within 1/64, clamped to the max") {
  Histogram h;
  h.record(1'000'000);
  h.record(1'000'001);
  h.record(1'000'002);
  const int64_t p33 = h.percentile(33);
  CHECK(p33 >= 1'000'000);
  CHECK(p33 <= 1'000'002);  // clamped to the largest value seen
  CHECK(h.percentile(100) == 1'000'002);
}

TEST_CASE("percentile 100 is exactly the max, even for the largest int64") {
  Histogram h;
  h.record(3);
  h.record(std::numeric_limits<int64_t>::max());
  CHECK(h.percentile(100) == std::numeric_limits<int64_t>::max());
  CHECK(h.percentile(50) == 3);
  CHECK(h.max() == std::numeric_limits<int64_t>::max());
}

TEST_CASE("percentile splits a bimodal distribution at the right rank") {
  Histogram h;
  for (int i = 0; i < 90; ++i)
    h.record(1'000);
  for (int i = 0; i < 10; ++i)
    h.record(1'000'000'000);
  CHECK(h.percentile(90) >= 1'000);
  CHECK(h.percentile(90) < 1'000 + 1'000 / 64 + 1);
  CHECK(h.percentile(91) >= 1'000'000'000);
  CHECK(h.percentile(99) == 1'000'000'000);
}

TEST_CASE("p99.9 of 1000 values is the 999th value, not the largest") {
  // 99.9 / 100 * 1000 is 999.0000000000001 in doubles: the rank must still be 999.
  Histogram h;
  std::vector<int64_t> values;
  for (int i = 0; i < 999; ++i) {
    h.record(1'000);
    values.push_back(1'000);
  }
  h.record(1'000'000'000);
  values.push_back(1'000'000'000);
  CHECK(exact_percentile(values, 99.9) == 1'000);
  CHECK(h.percentile(99.9) < 1'000 + 1'000 / 64 + 1);
  CHECK(h.percentile(100) == 1'000'000'000);
}

TEST_CASE("merge equals recording everything in one histogram") {
  const auto a_values = spread_values(11, 3000);
  const auto b_values = spread_values(12, 1700);
  Histogram a, b, all;
  for (int64_t v : a_values) {
    a.record(v);
    all.record(v);
  }
  for (int64_t v : b_values) {
    b.record(v);
    all.record(v);
  }
  a.merge(b);
  CHECK(a.count() == all.count());
  CHECK(a.min() == all.min());
  CHECK(a.max() == all.max());
  for (double p : k_percentiles) {
    CAPTURE(p);
    CHECK(a.percentile(p) == all.percentile(p));
  }
}

TEST_CASE("merging with an empty histogram in either direction") {
  Histogram filled;
  filled.record(200);
  filled.record(9'000);

  SUBCASE("empty into filled changes nothing") {
    Histogram empty;
    filled.merge(empty);
    CHECK(filled.count() == 2);
    CHECK(filled.min() == 200);
    CHECK(filled.max() == 9'000);
  }
  SUBCASE("filled into empty takes its min and max, not 0") {
    Histogram empty;
    empty.merge(filled);
    CHECK(empty.count() == 2);
    CHECK(empty.min() == 200);
    CHECK(empty.max() == 9'000);
    CHECK(empty.percentile(100) == 9'000);
  }
}
