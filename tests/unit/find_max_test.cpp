// --find-max --slo: the objective's parser, the flags' rules, judging a step and the search's
// order of rates.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "command_line_support.hpp"
#include "config/slo.hpp"
#include "judging/slo_check.hpp"
#include "runner/find_max.hpp"

using rlcheck::config::FindMaxConfig;
using rlcheck::config::parse_slo;
using rlcheck::config::SloBound;
using rlcheck::judging::slo_check;
using rlcheck::runner::FindMaxSearch;
using rlcheck::runner::judge_step;
using rlcheck::runner::StepCounts;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;
using namespace std::chrono_literals;

namespace {

// A step whose decided requests all took `latency`, sent `late` after they were due.
StepCounts step_of(uint64_t planned, std::chrono::nanoseconds latency,
                   std::chrono::nanoseconds late = 0ns, uint64_t errors = 0) {
  StepCounts counts;
  counts.planned = planned;
  counts.sent = planned;
  counts.allowed = planned - errors;
  counts.errors = errors;
  for (uint64_t i = 0; i + errors < planned; ++i) {
    counts.latency_ns.record(latency.count());
    counts.lateness_ns.record(late.count());
  }
  return counts;
}

FindMaxConfig options(std::string_view slo, std::chrono::nanoseconds step = 1s) {
  return {true, *parse_slo(slo), step};
}

// Runs the search against a target that holds the objective up to `capacity` per second.
std::vector<int64_t> search_against(int64_t capacity, FindMaxSearch& search) {
  std::vector<int64_t> rates;
  while (const auto rate = search.next_rate()) {
    rates.push_back(*rate);
    search.observe(step_of(static_cast<uint64_t>(*rate), *rate <= capacity ? 2ms : 50ms));
  }
  return rates;
}

}  // namespace

TEST_CASE("--slo parses percentiles and bounds, and says what is wrong") {
  const auto slo = parse_slo("p99<10ms,p50<2ms,p99.9<1s");
  REQUIRE(slo);
  REQUIRE(slo->size() == 3);
  CHECK((*slo)[0].percentile == 99);
  CHECK((*slo)[0].bound == 10ms);
  CHECK((*slo)[1].percentile == 50);
  CHECK((*slo)[2].percentile == doctest::Approx(99.9));
  CHECK((*slo)[2].bound == 1s);
  CHECK(rlcheck::config::format_slo(*slo) == "p99<10ms,p50<2ms,p99.9<1s");

  for (const char* bad : {"", "p99", "99<10ms", "p<10ms", "p0<10ms", "p100<1s", "p99<", "p99<0s",
                          "p99<10ms,", "px<1s", "p99<10", "p99>10ms"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_slo(bad));
  }
  CHECK(mentions(parse_slo("p100<1s").error(), "below 100"));
}

TEST_CASE("--find-max takes --rate and --duration as its first step") {
  const auto parsed = parse_arguments({"http", "http://127.0.0.1:1/", "--find-max", "--slo",
                                       "p99<10ms", "--rate", "50/s", "--duration", "2s"});
  const auto& config = parsed.config;
  CHECK(config.find_max.enabled);
  CHECK(config.find_max.step == 2s);
  REQUIRE(config.load.rate);
  CHECK(config.load.rate->tokens == 50);
  CHECK(config.load.requests == 100);

  const auto defaults = parse_arguments({"redis", "--find-max", "--slo", "p99<10ms"}).config;
  CHECK(defaults.find_max.step == 5s);
  CHECK(defaults.load.requests == 500);  // 100/s for 5s
}

TEST_CASE("--find-max refuses what a search cannot take, naming the flag") {
  CHECK(mentions(usage_error({"redis", "--find-max"}), "--find-max: needs --slo"));
  CHECK(mentions(usage_error({"redis", "--slo", "p99<1ms"}), "--slo: needs --find-max"));
  CHECK(mentions(usage_error({"redis", "--find-max", "--slo", "p99"}), "--slo:"));
  const std::vector<std::pair<std::vector<const char*>, const char*>> refused = {
      {{"-n", "10"}, "--requests"},
      {{"--interval", "10ms"}, "--interval"},
      {{"--runs", "2"}, "--runs"},
      {{"--verify-retry-after"}, "--verify-retry-after"},
      {{"--fault", "pause@1s+1s"}, "--fault"},
      {{"--duration", "0s"}, "--duration"},
      {{"--rate", "1/10s"}, "--rate"},
  };
  for (const auto& [extra, flag] : refused) {
    std::vector<const char*> args = {"redis", "--find-max", "--slo", "p99<10ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string message = usage_error(args);
    CAPTURE(message);
    CHECK(message.rfind(flag, 0) == 0);
  }
}

TEST_CASE("a step holds when every bound's percentile, the errors and the sent share do") {
  const std::vector<SloBound> slo = *parse_slo("p99<10ms,p50<5ms");
  CHECK(judge_step(100, "ladder", 1s, step_of(100, 3ms), slo, 0).passed);

  const auto slow = judge_step(100, "ladder", 1s, step_of(100, 20ms), slo, 0);
  CHECK_FALSE(slow.passed);
  CHECK(slow.missed_for_sure);
  CHECK(mentions(slow.why, "p99 "));
  CHECK(mentions(slow.why, "p50 "));

  const auto errors = judge_step(100, "ladder", 1s, step_of(100, 3ms, 0ns, 2), slo, 1);
  CHECK_FALSE(errors.passed);
  CHECK(mentions(errors.why, "2 errors over --max-errors 1"));
  CHECK(judge_step(100, "ladder", 1s, step_of(100, 3ms, 0ns, 1), slo, 1).passed);

  StepCounts short_of_plan = step_of(100, 3ms);
  short_of_plan.sent = 94;
  CHECK(mentions(judge_step(100, "ladder", 1s, short_of_plan, slo, 0).why, "sent 94 of 100"));

  // Just over the bound, within the histogram's bucket: a miss, but not one for sure.
  const auto edge =
      judge_step(100, "ladder", 1s, step_of(100, 10'050us), *parse_slo("p99<10ms"), 0);
  CHECK_FALSE(edge.passed);
  CHECK_FALSE(edge.missed_for_sure);

  // rlcheck itself sent late by more than half the tightest bound.
  CHECK(judge_step(100, "ladder", 1s, step_of(100, 20ms, 3ms), slo, 0).client_bound);
  CHECK_FALSE(judge_step(100, "ladder", 1s, step_of(100, 20ms, 2ms), slo, 0).client_bound);
}

TEST_CASE("the search doubles until a step misses, then narrows between the two") {
  FindMaxSearch search(options("p99<10ms"), 50, 0);
  const std::vector<int64_t> rates = search_against(300, search);
  // 50, 100, 200 held; 400 missed; then 250 and 300 held, 350 missed.
  CHECK(rates == std::vector<int64_t>{50, 100, 200, 400, 250, 300, 350});
  const auto result = search.result();
  REQUIRE(result.max_rate);
  CHECK(*result.max_rate == 300);
  CHECK_FALSE(result.client_bound);
  CHECK(result.steps[4].phase == "refine");
  CHECK(slo_check(result).status == rlcheck::checks::Status::pass);
  CHECK(mentions(slo_check(result).detail, "max 300/s within p99<10ms"));
}

TEST_CASE(
    "the search stops at the first miss in refinement, and reports no rate when the first "
    "step missed") {
  FindMaxSearch narrow(options("p99<10ms"), 100, 0);
  CHECK(search_against(250, narrow) == std::vector<int64_t>{100, 200, 400, 250, 300});
  CHECK(*narrow.result().max_rate == 250);

  FindMaxSearch none(options("p99<10ms"), 100, 0);
  CHECK(search_against(10, none) == std::vector<int64_t>{100});
  CHECK_FALSE(none.result().max_rate);
  const auto check = slo_check(none.result());
  CHECK(check.status == rlcheck::checks::Status::fail);
  CHECK(mentions(check.detail, "even 100/s missed p99<10ms"));
}

TEST_CASE("a miss while rlcheck sent late ends the search with a lower bound") {
  FindMaxSearch search(options("p99<10ms"), 100, 0);
  search.observe(step_of(100, 2ms));
  search.observe(step_of(200, 40ms, 8ms));
  CHECK_FALSE(search.next_rate());
  const auto result = search.result();
  CHECK(result.client_bound);
  CHECK(*result.max_rate == 100);
  CHECK(mentions(slo_check(result).detail, "at least 100/s"));

  FindMaxSearch first(options("p99<10ms"), 100, 0);
  first.observe(step_of(100, 40ms, 8ms));
  CHECK(slo_check(first.result()).status == rlcheck::checks::Status::skip);
}

TEST_CASE("a late step whose connections were all busy names the pool, not rlcheck") {
  // 20 connections each holding a request for the whole 1 s step: the pool was the limit.
  StepCounts saturated = step_of(200, 40ms, 8ms);
  saturated.slots = 20;
  saturated.span_ns = 1'000'000'000;
  saturated.busy_ns = 19 * saturated.span_ns;
  CHECK(rlcheck::runner::pool_saturated(saturated));
  FindMaxSearch search(options("p99<10ms"), 100, 0);
  search.observe(step_of(100, 2ms));
  search.observe(saturated);
  const auto result = search.result();
  CHECK(result.client_bound);
  CHECK(result.pool_bound);
  const std::string detail = slo_check(result).detail;
  CHECK(mentions(detail, "at least 100/s"));
  CHECK(mentions(detail, "all 20 connections busy for the whole step: raise -p"));
  CHECK_FALSE(mentions(detail, "rlcheck could not send"));
  CHECK(mentions(rlcheck::report::find_max_lines(result), "raise -p"));

  // Half of them idle on average: rlcheck's own limit, as before.
  StepCounts idle = saturated;
  idle.busy_ns = 10 * idle.span_ns;
  CHECK_FALSE(rlcheck::runner::pool_saturated(idle));
  FindMaxSearch client(options("p99<10ms"), 100, 0);
  client.observe(step_of(100, 2ms));
  client.observe(idle);
  CHECK_FALSE(client.result().pool_bound);
  CHECK(mentions(slo_check(client.result()).detail, "rlcheck could not send faster here"));

  // The first step already: skip, naming the pool.
  FindMaxSearch first(options("p99<10ms"), 200, 0);
  first.observe(saturated);
  const auto check = slo_check(first.result());
  CHECK(check.status == rlcheck::checks::Status::skip);
  CHECK(mentions(check.detail, "raise -p"));
}

TEST_CASE("a target that holds every step is reported as a floor, not a maximum") {
  FindMaxSearch search(options("p99<10ms"), 100'000, 0);
  const std::vector<int64_t> rates = search_against(10'000'000, search);
  CHECK(rates == std::vector<int64_t>{100'000, 200'000, 400'000, 800'000});
  const auto result = search.result();
  CHECK(result.ceiling);
  CHECK(*result.max_rate == 800'000);
  CHECK(mentions(slo_check(result).detail, "every step held"));
}

TEST_CASE("each step's load sends its rate for the step's duration") {
  FindMaxSearch search(options("p99<10ms", 2s), 50, 0);
  rlcheck::config::LoadConfig base;
  const auto load = search.next_load(base);
  REQUIRE(load.rate);
  CHECK(load.rate->tokens == 50);
  CHECK(load.rate->period == 1s);
  CHECK(load.requests == 100);
}
