#include <doctest/doctest.h>

#include <map>

#include "config/cost_plan.hpp"

using rlcheck::config::format_cost;
using rlcheck::config::parse_cost;
using rlcheck::config::parse_cost_dist;

TEST_CASE("--cost: one cost, or a uniform range, each request's drawn from the seed") {
  const auto one = parse_cost("5");
  REQUIRE(one);
  CHECK(one->weighted());
  CHECK(one->of(0) == 5);
  CHECK(one->of(12345) == 5);
  CHECK_FALSE(parse_cost("1")->weighted());

  auto range = parse_cost("1-10");
  REQUIRE(range);
  range->seed = 7;
  std::map<int32_t, int> seen;
  for (uint64_t seq = 0; seq < 10'000; ++seq) {
    const int32_t cost = range->of(seq);
    CHECK(cost >= 1);
    CHECK(cost <= 10);
    ++seen[cost];
    CHECK(range->of(seq) == cost);  // the same request always costs the same
  }
  CHECK(seen.size() == 10);
  CHECK(format_cost(*range) == "1-10");
  CHECK(range->mean() == doctest::Approx(5.5));
}

TEST_CASE("--cost-dist: costs drawn with their weights") {
  auto dist = parse_cost_dist("1:80,10:15,100:5");
  REQUIRE(dist);
  dist->seed = 1;
  std::map<int32_t, int> seen;
  for (uint64_t seq = 0; seq < 100'000; ++seq)
    ++seen[dist->of(seq)];
  CHECK(seen.size() == 3);
  CHECK(seen[1] == doctest::Approx(80'000).epsilon(0.02));
  CHECK(seen[10] == doctest::Approx(15'000).epsilon(0.05));
  CHECK(seen[100] == doctest::Approx(5'000).epsilon(0.1));
  CHECK(dist->largest() == 100);
  CHECK(format_cost(*dist) == "1:80,10:15,100:5");
}

TEST_CASE("a malformed cost says what it expects") {
  CHECK(parse_cost("0").error() == "'0' is not a cost: a whole number from 1 to 1000000");
  CHECK(parse_cost("10-1").error() == "'10-1': the range goes from low to high");
  CHECK(parse_cost_dist("1,2").error() == "'1' needs COST:WEIGHT, e.g. 1:80,10:15,100:5");
  CHECK_FALSE(parse_cost_dist("1:0"));
  CHECK_FALSE(parse_cost("x"));
}
