#include <doctest/doctest.h>

#include <memory>

#include "command_line_support.hpp"
#include "engine/schedule.hpp"
#include "observe/schedule_lag.hpp"

using namespace std::chrono_literals;
using rlcheck::observe::behind_schedule;
using rlcheck::observe::lag_warning;
using rlcheck::observe::LagSample;
using rlcheck::observe::rate_ceiling_warning;
using rlcheck::observe::ScheduleLag;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;

namespace {

// 100/s for 10 s: request i is due at i x 10 ms.
std::shared_ptr<const rlcheck::engine::Schedule> hundred_a_second() {
  rlcheck::config::LoadConfig load;
  load.rate = rlcheck::config::Rate{100, 1s};
  load.requests = 1000;
  return std::make_shared<const rlcheck::engine::Schedule>(rlcheck::engine::Schedule::make(load));
}

}  // namespace

TEST_CASE("behind its schedule: more than 1 s and more than 10 % of the time elapsed") {
  CHECK_FALSE(behind_schedule(900ms, 2s));    // under 1 s
  CHECK_FALSE(behind_schedule(1500ms, 20s));  // under 10 %
  CHECK(behind_schedule(1500ms, 10s));
  CHECK(behind_schedule(2300ms, 5s));
}

TEST_CASE("the lag is the time since the next request to send was due") {
  const ScheduleLag lag(hundred_a_second(), 1000);
  CHECK(lag.lag(5s, 100) == 4s);    // request 100 was due at 1 s
  CHECK(lag.lag(5s, 600) == 0s);    // ahead: request 600 is due at 6 s
  CHECK(lag.lag(12s, 1000) == 0s);  // every request has left
  CHECK(lag.due_by(5s) == 501);     // requests 0 to 500
  CHECK(lag.due_by(0s) == 1);
  CHECK(lag.due_by(20s) == 1000);
  CHECK(lag.rate_due(100) == doctest::Approx(100));
}

TEST_CASE("many hosts: the lag of this worker's share of the run") {
  // Worker 1 of 2 sends requests 1, 3, 5, ...: its 50th is the run's 101st, due at 1.01 s.
  const ScheduleLag lag(hundred_a_second(), 1000, 2, 1);
  CHECK(lag.lag(5s, 50) == 5s - 1010ms);
  CHECK(lag.due_by(5s) == 250);  // 1, 3, ..., 499
}

TEST_CASE("the warning names the run, the lag, what was sent and due, and which side is short") {
  LagSample sample;
  sample.run = 1;
  sample.lag = 2300ms;
  sample.sent = 30123;
  sample.due = 61000;
  sample.rate_per_s = 1e9;
  sample.in_flight = 3;
  sample.slots = 50;
  const std::string client = lag_warning(sample);
  CHECK(client.starts_with("warning: run 1 is 2.3s behind its schedule (sent 30123 of 61000 due)"));
  CHECK(mentions(client, "rlcheck cannot send at 1000000000/s here"));
  CHECK(client.find('\n') == std::string::npos);
  sample.in_flight = 50;
  const std::string pool = lag_warning(sample);
  CHECK(mentions(pool, "every one of the 50 in-flight slots (-p x --pipeline) was busy"));
  CHECK(mentions(pool, "raise -p"));
}

TEST_CASE("a planned rate no connection pool can carry is said before the run") {
  const auto config = [](std::vector<const char*> args) {
    return parse_arguments(std::move(args)).config;
  };
  const auto warned = rate_ceiling_warning(
      config({"redis", "--rate", "1000000000/s", "--duration", "1ms", "-p", "50"}));
  REQUIRE(warned.has_value());
  CHECK(mentions(*warned, "1000000000/s planned"));
  CHECK(mentions(*warned, "50 in-flight slots (-p x --pipeline) can carry at most 2500000/s"));
  CHECK_FALSE(rate_ceiling_warning(config({"redis", "--rate", "1000/s", "--duration", "1s"})));
  CHECK_FALSE(rate_ceiling_warning(config({"redis", "-n", "200"})));
  // --pipeline multiplies what the connections carry.
  CHECK_FALSE(rate_ceiling_warning(config(
      {"redis", "--rate", "3000000/s", "--duration", "1ms", "-p", "50", "--pipeline", "2"})));
  // --stages: their peak.
  CHECK(rate_ceiling_warning(config({"redis", "--stages", "1ms:100000000/s", "-p", "1"})));
}
