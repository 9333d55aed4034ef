#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "checks/offered_rate.hpp"
#include "engine/schedule.hpp"

using rlcheck::checks::offered_rate;
using rlcheck::checks::RateBin;
using rlcheck::checks::SentRequest;
using rlcheck::engine::Schedule;

namespace {

constexpr int64_t k_s = 1'000'000'000;

// --rate tokens/period for `seconds`: tokens x seconds / period requests, as the CLI plans them.
Schedule uniform(int64_t tokens, int64_t seconds, int64_t period_s = 1) {
  rlcheck::config::LoadConfig load;
  load.rate = rlcheck::config::Rate{tokens, std::chrono::seconds(period_s)};
  load.requests = tokens * seconds / period_s;
  return Schedule::make(load);
}

// Every planned request sent at its due instant plus `late(index)` ns.
template <typename Late>
std::vector<SentRequest> sends(const Schedule& schedule, Late late) {
  std::vector<SentRequest> out;
  for (uint64_t i = 0; i < schedule.requests(); ++i)
    out.push_back({i, schedule.due(i).count() + static_cast<int64_t>(late(i))});
  return out;
}

// The bins tile [0, end) in order.
void check_tiling(const std::vector<RateBin>& bins, int64_t end) {
  REQUIRE(!bins.empty());
  CHECK(bins.front().from_ns == 0);
  for (size_t k = 1; k < bins.size(); ++k)
    CHECK(bins[k].from_ns == bins[k - 1].to_ns);
  CHECK(bins.back().to_ns == end);
}

}  // namespace

TEST_CASE("offered rate: a uniform 40/s for 5s, sent on time, is 40/s in every bin") {
  const Schedule schedule = uniform(40, 5);
  const std::vector<RateBin> bins =
      offered_rate(sends(schedule, [](uint64_t) { return 0; }), schedule);
  CHECK(bins.size() == 50);  // four requests a bin, 100 ms each
  check_tiling(bins, 5 * k_s);
  for (const RateBin& bin : bins) {
    CHECK(bin.to_ns - bin.from_ns == 100'000'000);
    CHECK(bin.sent_per_s == 40);
    CHECK(bin.planned_per_s == 40);
  }
}

TEST_CASE("offered rate: sends late or early by less than a bin stay in their bins") {
  // Up to 74 ms late or 12 ms early (the virtual clock's floors), bins of 75 ms.
  const Schedule schedule = uniform(40, 3);
  const auto jitter = [](uint64_t i) {
    const int64_t offsets[] = {0, 12'000'000, -12'000'000, 30'000'000, 74'999'999, -1};
    return offsets[i % 6];
  };
  std::vector<SentRequest> sent = sends(schedule, jitter);
  sent.front().sent_ns = 0;  // nothing goes before the start line
  const std::vector<RateBin> bins = offered_rate(sent, schedule);
  CHECK(bins.size() == 40);  // 120 requests, three a bin
  check_tiling(bins, 3 * k_s);
  for (const RateBin& bin : bins)
    CHECK(bin.sent_per_s == 40);
}

TEST_CASE("offered rate: exact at 7/s, 100/s and 1000/s, a partial last bin included") {
  struct Case {
    int64_t per_s, seconds;
    size_t bins;
  };
  for (const Case c : {Case{7, 5, 35}, Case{100, 5, 50}, Case{1000, 5, 50}, Case{7, 60, 47},
                       Case{1000, 3, 50}, Case{100, 1, 50}, Case{3, 7, 21}}) {
    CAPTURE(c.per_s);
    CAPTURE(c.seconds);
    const Schedule schedule = uniform(c.per_s, c.seconds);
    // Late by up to a third of the gap, in a pattern that crosses no midpoint.
    const int64_t gap = k_s / c.per_s;
    const std::vector<RateBin> bins =
        offered_rate(sends(schedule, [gap](uint64_t i) { return (i % 4) * gap / 9; }), schedule);
    CHECK(bins.size() == c.bins);
    check_tiling(bins, c.seconds * k_s);
    for (const RateBin& bin : bins) {
      CHECK(bin.sent_per_s == static_cast<double>(c.per_s));
      CHECK(bin.planned_per_s == static_cast<double>(c.per_s));
    }
  }
  // 7/s for a minute: 420 requests, nine a bin, the last bin six of them over 6/7 s.
  const std::vector<RateBin> minute =
      offered_rate(sends(uniform(7, 60), [](uint64_t) { return 0; }), uniform(7, 60));
  CHECK(minute.back().to_ns - minute.back().from_ns == 6 * k_s / 7 + 1);
}

TEST_CASE("offered rate: a rate per minute, and a request missing, show as they are") {
  // 90/min for a minute: 90 requests, two a bin of 4/3 s.
  const Schedule schedule = uniform(90, 60, 60);
  REQUIRE(schedule.requests() == 90);
  std::vector<SentRequest> sent = sends(schedule, [](uint64_t) { return 0; });
  sent.erase(sent.begin() + 10);  // never sent
  const std::vector<RateBin> bins = offered_rate(sent, schedule);
  REQUIRE(bins.size() == 45);  // two a bin
  for (size_t k = 0; k < bins.size(); ++k) {
    CAPTURE(k);
    CHECK(bins[k].sent_per_s == doctest::Approx(k == 5 ? 0.75 : 1.5));
  }
}

TEST_CASE("offered rate: a send a bin or more late counts where it left") {
  const Schedule schedule = uniform(40, 5);
  std::vector<SentRequest> sent = sends(schedule, [](uint64_t) { return 0; });
  sent[3].sent_ns += 100'000'000;  // the last of bin 0, one bin (100 ms) late: in bin 1
  sent[4].sent_ns += 99'999'999;   // the first of bin 1, just under a bin late: in bin 1
  sent[9].sent_ns += 99'999'999;   // the second of bin 2: still in bin 2
  const std::vector<RateBin> bins = offered_rate(sent, schedule);
  REQUIRE(bins.size() == 50);
  CHECK(bins[0].sent_per_s == 30);
  CHECK(bins[1].sent_per_s == 50);
  CHECK(bins[2].sent_per_s == 40);
}

TEST_CASE("offered rate: sends late past the plan go into bins after it, planned 0") {
  const Schedule schedule = uniform(40, 5);
  // The last second's 40 requests all leave 2 s late.
  const std::vector<RateBin> bins = offered_rate(
      sends(schedule, [](uint64_t i) { return i >= 160 ? 2 * k_s : int64_t{0}; }), schedule);
  REQUIRE(bins.size() == 50 + 20);  // two seconds more of 100 ms bins
  double sent = 0;
  for (const RateBin& bin : bins)
    sent += bin.sent_per_s * static_cast<double>(bin.to_ns - bin.from_ns) / 1e9;
  CHECK(sent == doctest::Approx(200));
  CHECK(bins[39].sent_per_s == 40);
  CHECK(bins[40].sent_per_s == 0);  // the last second of the plan: nothing left on time
  CHECK(bins[49].planned_per_s == 40);
  CHECK(bins[50].planned_per_s == 0);
  CHECK(bins[60].sent_per_s == 40);  // 6 s in: they arrive
  CHECK(bins.back().sent_per_s == 40);
}

TEST_CASE("offered rate: a ramp follows the plan; Poisson arrivals in bins of equal width") {
  rlcheck::config::LoadConfig ramp;
  ramp.stages = {{std::chrono::seconds(4), 100}};  // 0 to 100/s over 4 s: 200 requests
  ramp.requests = 200;
  const Schedule ramped = Schedule::make(ramp);
  const std::vector<RateBin> up = offered_rate(sends(ramped, [](uint64_t) { return 0; }), ramped);
  REQUIRE(up.size() == 50);
  for (const RateBin& bin : up) {
    const double middle = static_cast<double>(bin.from_ns + bin.to_ns) / 2 / 1e9;
    CHECK(bin.sent_per_s == doctest::Approx(25 * middle).epsilon(0.05));  // 100/s over 4 s
    CHECK(bin.planned_per_s == doctest::Approx(bin.sent_per_s).epsilon(0.05));
  }

  rlcheck::config::LoadConfig poisson;
  poisson.rate = rlcheck::config::Rate{100, std::chrono::seconds(1)};
  poisson.requests = 300;
  poisson.arrivals = rlcheck::config::Arrivals::poisson;
  const Schedule random = Schedule::make(poisson, 7);
  const std::vector<RateBin> bins = offered_rate(sends(random, [](uint64_t) { return 0; }), random);
  REQUIRE(bins.size() == 50);
  check_tiling(bins, 3 * k_s);
  double sent = 0;
  for (const RateBin& bin : bins) {
    CHECK(bin.to_ns - bin.from_ns == 60'000'000);
    CHECK(bin.planned_per_s == 100);
    sent += bin.sent_per_s * 0.06;
  }
  CHECK(sent == doctest::Approx(300));
}

TEST_CASE("offered rate: nothing for the closed model or an empty plan") {
  rlcheck::config::LoadConfig closed;
  closed.requests = 100;
  CHECK(offered_rate(std::vector<SentRequest>{{0, 0}, {1, 1}}, Schedule::make(closed)).empty());
  rlcheck::config::LoadConfig none;
  none.rate = rlcheck::config::Rate{10, std::chrono::seconds(1)};
  none.requests = 0;
  CHECK(offered_rate(std::vector<SentRequest>{}, Schedule::make(none)).empty());
}
