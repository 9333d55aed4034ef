#include "runner/status_line.hpp"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using rlcheck::runner::format_status;
using rlcheck::runner::StatusCounts;
using rlcheck::runner::StatusSchedule;

TEST_CASE("status line: none in the first two minutes, then one a minute") {
  StatusSchedule schedule;
  CHECK_FALSE(schedule.due(0s));
  CHECK_FALSE(schedule.due(60s));
  CHECK_FALSE(schedule.due(119s));
  CHECK(schedule.due(120s));
  CHECK_FALSE(schedule.due(121s));
  CHECK_FALSE(schedule.due(179'999ms));
  CHECK(schedule.due(180s));
  CHECK(schedule.due(240'200ms));
}

TEST_CASE("status line: a late check prints one line, not the ones it missed") {
  StatusSchedule schedule;
  CHECK(schedule.due(10min + 30s));
  CHECK_FALSE(schedule.due(10min + 59s));
  CHECK(schedule.due(11min));
}

TEST_CASE("status line: counts, rate and elapsed time") {
  const StatusCounts counts{1'200'000, 1'000, 1'198'990, 10};
  CHECK(format_status("lua run 1/4", counts, 120s) ==
        "rlcheck: lua run 1/4: 1200000 requests done (1000 allowed, 1198990 denied, 10 errors), "
        "10000/s, 2m00s elapsed");
  CHECK(format_status("run 2/2", {}, 0s) ==
        "rlcheck: run 2/2: 0 requests done (0 allowed, 0 denied, 0 errors), 0/s, 0m00s elapsed");
  CHECK(format_status("r", {7'200, 0, 7'200, 0}, 2h + 3min + 4s) ==
        "rlcheck: r: 7200 requests done (0 allowed, 7200 denied, 0 errors), 1/s, 2h03m04s elapsed");
}
