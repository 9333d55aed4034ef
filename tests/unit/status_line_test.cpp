#include "observe/status_line.hpp"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using rlcheck::observe::format_elapsed;
using rlcheck::observe::format_latency;
using rlcheck::observe::format_span;
using rlcheck::observe::format_status;
using rlcheck::observe::status_schedule;
using rlcheck::observe::StatusLine;
using rlcheck::observe::StatusSchedule;

TEST_CASE("status line: the first at `first`, then one every `every`") {
  StatusSchedule schedule(30s, 10s);
  CHECK_FALSE(schedule.due(0s));
  CHECK_FALSE(schedule.due(29s));
  CHECK(schedule.due(30s));
  CHECK_FALSE(schedule.due(31s));
  CHECK_FALSE(schedule.due(39'999ms));
  CHECK(schedule.due(40s));
  CHECK(schedule.due(50'200ms));
}

TEST_CASE("status line: a late check prints one line, not the ones it missed") {
  StatusSchedule schedule(10s, 10s);
  CHECK(schedule.due(1min + 30s));
  CHECK_FALSE(schedule.due(1min + 39s));
  CHECK(schedule.due(1min + 40s));
}

TEST_CASE("status line: --progress-interval, else 10 s for runs over 30 s, from 30 s unplanned") {
  // Given: every interval from the first; 0 is none.
  auto given = status_schedule(5s, 10min);
  REQUIRE(given);
  CHECK_FALSE(given->due(4s));
  CHECK(given->due(5s));
  CHECK(given->due(10s));
  CHECK_FALSE(status_schedule(0s, std::nullopt));
  // Default: a planned span over 30 s gets a line every 10 s; 30 s or less none.
  auto planned = status_schedule(std::nullopt, 31s);
  REQUIRE(planned);
  CHECK(planned->due(10s));
  CHECK_FALSE(status_schedule(std::nullopt, 30s));
  // The closed model (no span): first at 30 s, then every 10 s.
  auto unplanned = status_schedule(std::nullopt, std::nullopt);
  REQUIRE(unplanned);
  CHECK_FALSE(unplanned->due(29s));
  CHECK(unplanned->due(30s));
  CHECK_FALSE(unplanned->due(35s));
  CHECK(unplanned->due(40s));
}

TEST_CASE("status line: counts, rate and p99 of the last second, elapsed of planned") {
  StatusLine line;
  line.label = "lua run 1/4";
  line.sent = 12'000;
  line.planned = 60'000;
  line.allowed = 1'000;
  line.denied = 10'950;
  line.rate = 1998.4;
  line.p99_ns = 1'200'000;
  line.elapsed = 6'500ms;
  line.span = 30s;
  CHECK(format_status(line) ==
        "rlcheck: lua run 1/4: 12000/60000 sent, 1000 allowed, 10950 denied, 0 errors, 1998/s, "
        "p99 1.2ms (last 1s), 6s/30s");
  // The closed model has no span; nothing decided in the last second has no p99.
  line.span.reset();
  line.p99_ns.reset();
  line.rate.reset();
  line.elapsed = 2h + 3min + 4s;
  CHECK(format_status(line) ==
        "rlcheck: lua run 1/4: 12000/60000 sent, 1000 allowed, 10950 denied, 0 errors, 0/s, "
        "p99 - (last 1s), 2h03m");
  // The virtual clock's time.
  line.virtual_clock = true;
  line.elapsed = 3h;
  line.span = 24h;
  CHECK(format_status(line).ends_with(", virtual 3h00m/24h"));
  // --stages: the stage under way.
  line.stage = 2;
  line.stages = 3;
  CHECK(format_status(line).ends_with(", stage 2/3, virtual 3h00m/24h"));
}

TEST_CASE("status line: elapsed, span and latency spellings") {
  CHECK(format_elapsed(0s) == "0s");
  CHECK(format_elapsed(59'999ms) == "59s");
  CHECK(format_elapsed(65s) == "1m05s");
  CHECK(format_elapsed(3h + 59s) == "3h00m");
  CHECK(format_span(30s) == "30s");
  CHECK(format_span(90s) == "1m30s");
  CHECK(format_span(5min) == "5m");
  CHECK(format_span(24h) == "24h");
  CHECK(format_span(90min) == "1h30m");
  CHECK(format_latency(850'000) == "850us");
  CHECK(format_latency(1'240'000) == "1.2ms");
  CHECK(format_latency(35'400'000) == "35ms");
  CHECK(format_latency(1'500'000'000) == "1.5s");
}
