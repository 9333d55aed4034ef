// When requests are due: the closed and open models' exact formulas, --stages' ramps, and
// Poisson arrivals (conditioned on the planned count, random access).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "config/stages.hpp"
#include "engine/schedule.hpp"

using namespace rlcheck;
using engine::Schedule;

namespace {

config::LoadConfig rate_load(int64_t requests, config::Rate rate) {
  config::LoadConfig load;
  load.requests = requests;
  load.rate = rate;
  return load;
}

config::LoadConfig staged_load(const char* stages, bool poisson = false) {
  config::LoadConfig load;
  load.stages = *config::parse_stages(stages);
  load.requests = static_cast<int64_t>(config::planned_requests(load.stages));
  if (poisson)
    load.arrivals = config::Arrivals::poisson;
  return load;
}

// Λ(t): the requests the stages plan before t seconds (linear ramps from the previous target).
double planned_before(const std::vector<config::Stage>& stages, double t) {
  double before = 0, at = 0, from = 0;
  for (const config::Stage& stage : stages) {
    const double length = static_cast<double>(stage.duration.count()) / 1e9;
    if (t <= at)
      break;
    const double s = std::min(t - at, length);
    const double slope = length > 0 ? (stage.to_per_s - from) / length : 0;
    before += from * s + slope * s * s / 2;
    at += length;
    from = stage.to_per_s;
  }
  return before;
}

struct GapStats {
  double mean = 0, cv = 0;
};

GapStats gaps_of(const std::vector<int64_t>& dues) {
  std::vector<double> gaps;
  for (size_t i = 1; i < dues.size(); ++i)
    gaps.push_back(static_cast<double>(dues[i] - dues[i - 1]));
  double sum = 0, squares = 0;
  for (double gap : gaps)
    sum += gap;
  const double mean = sum / static_cast<double>(gaps.size());
  for (double gap : gaps)
    squares += (gap - mean) * (gap - mean);
  const double deviation = std::sqrt(squares / static_cast<double>(gaps.size()));
  return {mean, deviation / mean};
}

}  // namespace

TEST_CASE("Schedule: the closed and open models' formulas, exactly as before stages") {
  config::LoadConfig load = rate_load(10, config::Rate{3, std::chrono::seconds(1)});
  Schedule three = Schedule::make(load);
  CHECK(three.due(1).count() == 333'333'333);
  CHECK(three.virtual_ns(0) == 0);
  CHECK(three.virtual_ns(1) == 333'000'000);
  CHECK(three.virtual_ns(2) == 666'000'000);
  CHECK(three.virtual_ns(3) == 1'000'000'000);
  CHECK(three.stage_of(3) == -1);
  CHECK(three.span_ns() == 3'333'333'333);
  CHECK(three.rate_at(0) == doctest::Approx(3));
  CHECK(three.rate_at(3'333'333'333) == 0);
  // 10 000 a minute for a day: the last of 14.4 M requests at exactly its instant.
  load = rate_load(14'400'000, config::Rate{10'000, std::chrono::minutes(1)});
  CHECK(Schedule::make(load).virtual_ns(14'400'000 - 1) == 86'399'994'000'000);
  load.rate.reset();
  load.interval = std::chrono::minutes(1);
  const Schedule paced = Schedule::make(load);
  CHECK(paced.virtual_ns(60) == 3'600'000'000'000);
  CHECK(paced.paced());
  CHECK_FALSE(paced.open_model());
  load.interval = {};
  const Schedule unpaced = Schedule::make(load);
  CHECK(unpaced.due(12345).count() == 0);
  CHECK_FALSE(unpaced.paced());
  CHECK(unpaced.span_ns() == 0);
  CHECK(unpaced.stage_count() == 0);
}

TEST_CASE("Schedule: stages ramp linearly from the previous target, request 0 at the start") {
  const config::LoadConfig load = staged_load("2s:100/s,2s:400/s,1s:0/s");
  REQUIRE(load.requests == 100 + 500 + 200);
  const Schedule schedule = Schedule::make(load);
  CHECK(schedule.due(0).count() == 0);
  CHECK(schedule.span_ns() == 5'000'000'000);
  int64_t last = -1;
  for (uint64_t i = 0; i < static_cast<uint64_t>(load.requests); ++i) {
    const int64_t due = schedule.due(i).count();
    CHECK(due >= last);  // non-decreasing
    CHECK(due < schedule.span_ns());
    last = due;
    // Λ(due(i)) = i: the inverse of the planned count, to the nanosecond it is floored to.
    CHECK(planned_before(load.stages, static_cast<double>(due) / 1e9) ==
          doctest::Approx(static_cast<double>(i)).epsilon(0).scale(1).epsilon(1e-5));
  }
  // Counted by due instant: 100 in the first ramp, 500 in the second, 200 ramping down.
  CHECK(schedule.stage_count() == 3);
  CHECK(schedule.stage_planned(0) == 100);
  CHECK(schedule.stage_planned(1) == 500);
  CHECK(schedule.stage_planned(2) == 200);
  CHECK(schedule.stage_of(99) == 0);
  CHECK(schedule.stage_of(100) == 1);
  CHECK(schedule.stage_of(599) == 1);
  CHECK(schedule.stage_of(600) == 2);
  CHECK(schedule.stage_from_ns(1) == 2'000'000'000);
  CHECK(schedule.stage_to_ns(1) == 4'000'000'000);
  CHECK(schedule.stage_from_rate(1) == 100);
  CHECK(schedule.stage_to_rate(1) == 400);
  CHECK(schedule.rate_at(1'000'000'000) == doctest::Approx(50));
  CHECK(schedule.rate_at(3'000'000'000) == doctest::Approx(250));
  CHECK(schedule.rate_at(4'500'000'000) == doctest::Approx(200));
  CHECK(schedule.rate_at(5'000'000'000) == 0);
  CHECK(schedule.virtual_ns(1) == schedule.due(1).count() / 1'000'000 * 1'000'000);
}

TEST_CASE("Schedule: a zero-length stage jumps, a stage from 0 to 0 pauses and holds none") {
  // 1s up to 100/s (50), drop to 0, pause 2s, jump to 100/s, 1s flat (100).
  const config::LoadConfig load = staged_load("1s:100/s,0s:0/s,2s:0/s,0s:100/s,1s:100/s");
  REQUIRE(load.requests == 150);
  const Schedule schedule = Schedule::make(load);
  std::vector<uint64_t> per_stage(schedule.stage_count(), 0);
  for (uint64_t i = 0; i < 150; ++i) {
    const int64_t due = schedule.due(i).count();
    CHECK((due < 1'000'000'000 || due >= 3'000'000'000));  // nothing in the pause
    ++per_stage[static_cast<size_t>(schedule.stage_of(i))];
  }
  CHECK(per_stage == std::vector<uint64_t>{50, 0, 0, 0, 100});
  for (size_t k = 0; k < per_stage.size(); ++k)
    CHECK(schedule.stage_planned(k) == per_stage[k]);
  // The flat stage after the jump: exactly 10 ms apart from its start.
  CHECK(schedule.due(50).count() == 3'000'000'000);
  CHECK(schedule.due(51).count() == doctest::Approx(3'010'000'000).epsilon(1e-9));
  CHECK(schedule.rate_at(2'000'000'000) == 0);
  CHECK(schedule.rate_at(3'500'000'000) == doctest::Approx(100));
  // A plan that starts with a jump: request 0 at the start, at the full rate.
  const Schedule jump = Schedule::make(staged_load("0s:400/s,1s:400/s"));
  CHECK(jump.due(0).count() == 0);
  CHECK(jump.due(1).count() == 2'500'000);
}

TEST_CASE("Schedule: Poisson arrivals are the planned count, reproducible by seed") {
  config::LoadConfig load = rate_load(100'000, config::Rate{1000, std::chrono::seconds(1)});
  load.arrivals = config::Arrivals::poisson;
  const Schedule schedule = Schedule::make(load, 7);
  const Schedule again = Schedule::make(load, 7);
  const Schedule other = Schedule::make(load, 8);
  std::vector<int64_t> dues;
  Schedule::Cursor cursor(schedule);
  int differ = 0;
  for (uint64_t i = 0; i < 100'000; ++i) {
    dues.push_back(cursor.due(i).count());
    if (i % 997 == 0) {
      CHECK(schedule.due(i).count() == dues.back());  // random access == sequential
      CHECK(again.due(i).count() == dues.back());     // the same seed, the same instants
      differ += other.due(i).count() != dues.back() ? 1 : 0;
    }
  }
  CHECK(differ > 90);
  CHECK(std::is_sorted(dues.begin(), dues.end()));
  CHECK(dues.front() >= 0);
  CHECK(dues.back() < schedule.span_ns());  // the last is due before the plan ends
  const GapStats gaps = gaps_of(dues);
  CHECK(gaps.mean == doctest::Approx(1e6).epsilon(0.01));  // 1000/s
  CHECK(gaps.cv > 0.95);
  CHECK(gaps.cv < 1.05);
  // Jumping backwards and forwards through a cursor gives the same instants.
  Schedule::Cursor jumping(schedule);
  for (uint64_t i : {99'999ULL, 3ULL, 50'000ULL, 255ULL, 256ULL, 0ULL})
    CHECK(jumping.due(i).count() == dues[i]);
}

TEST_CASE("Schedule: Poisson over stages follows the ramps and never piles up at 0/s") {
  const config::LoadConfig load = staged_load("10s:1000/s,10s:0/s", true);
  REQUIRE(load.requests == 10'000);
  const Schedule schedule = Schedule::make(load, 42);
  Schedule::Cursor cursor(schedule);
  uint64_t first_half = 0, last_percent = 0;
  std::vector<uint64_t> per_stage(2, 0);
  int64_t last = -1;
  for (uint64_t i = 0; i < 10'000; ++i) {
    const int64_t due = cursor.due(i).count();
    CHECK(due >= last);
    last = due;
    first_half += due < 10'000'000'000 ? 1 : 0;
    last_percent += due >= 19'800'000'000 ? 1 : 0;
    const int stage = cursor.stage_of(i);
    CHECK(stage == schedule.stage_of(i));
    CHECK(stage == (due < 10'000'000'000 ? 0 : 1));
    ++per_stage[static_cast<size_t>(stage)];
  }
  CHECK(last < 20'000'000'000);
  // Each ramp plans half; random arrivals hold it to a few standard deviations (~50).
  CHECK(first_half > 4800);
  CHECK(first_half < 5200);
  CHECK(last_percent <= 300);  // the last 1% of the plan: at most 3% of the requests
  CHECK(per_stage[0] == schedule.stage_planned(0));
  CHECK(per_stage[1] == schedule.stage_planned(1));
}
