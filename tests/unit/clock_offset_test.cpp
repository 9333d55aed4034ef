#include <doctest/doctest.h>

#include <vector>

#include "coord/clock_offset.hpp"

using rlcheck::coord::ClockSample;

TEST_CASE("clock offset: the sample with the shortest round trip is used") {
  // The coordinator is 5 ms ahead of the wall clock and 1 s ahead of the steady clock.
  const auto sample = [](int64_t before, int64_t round_trip, int64_t read_at) {
    ClockSample s;
    s.steady_before_ns = before;
    s.steady_after_ns = before + round_trip;
    s.wall_before_ns = before + 995'000'000;
    s.wall_after_ns = before + 995'000'000 + round_trip;
    s.remote_ns = before + read_at + 1'000'000'000;
    return s;
  };
  const std::vector<ClockSample> samples{sample(0, 4'000'000, 3'900'000),
                                         sample(10'000'000, 200'000, 100'000),
                                         sample(20'000'000, 9'000'000, 100'000)};
  const auto estimate = rlcheck::coord::estimate_clock(samples);
  CHECK(estimate.round_trip_ns == 200'000);
  CHECK(estimate.steady_offset_ns == 1'000'000'000);
  CHECK(estimate.wall_offset_ns == 5'000'000);
  CHECK(estimate.uncertainty_ns == 101'000);  // half the round trip, and TIME's microsecond
}

TEST_CASE("clock offset: two workers may disagree by their two largest uncertainties") {
  const std::vector<int64_t> uncertainties{30, 100, 70};
  CHECK(rlcheck::coord::pairwise_uncertainty(uncertainties) == 170);
  const std::vector<int64_t> one{40};
  CHECK(rlcheck::coord::pairwise_uncertainty(one) == 40);
  CHECK(rlcheck::coord::pairwise_uncertainty({}) == 0);
}
