// --clock-skew and --time-source: the list parser, the flags as the command line takes them,
// and the ARGV a built-in script gets when it reads the client's clock.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "command_line_support.hpp"
#include "config/clock_skew.hpp"
#include "coord/fingerprint.hpp"
#include "redis/strategies/script_strategy.hpp"
#include "runner/shared_test.hpp"
#include "targets/target_kind.hpp"

using namespace std::chrono_literals;
using rlcheck::config::format_clock_skew;
using rlcheck::config::format_clock_skews;
using rlcheck::config::k_max_clock_skews;
using rlcheck::config::Nanos;
using rlcheck::config::parse_clock_skews;
using rlcheck::config::TimeSource;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;

namespace {

// A real file for --script, removed when the test ends.
struct TempScript {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("rlcheck_skew_" + std::to_string(getpid()) + ".lua");
  TempScript() { std::ofstream(path) << "return 1\n"; }
  ~TempScript() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("clock skews: signed durations, a bare 0, in the order given") {
  const auto skews = parse_clock_skews("0,+500ms,-250ms,1.5s,-0");
  REQUIRE(skews.has_value());
  CHECK(*skews == std::vector<Nanos>{0ns, 500ms, -250ms, 1500ms, 0ns});
  CHECK(*parse_clock_skews("+800ms") == std::vector<Nanos>{800ms});
  CHECK(*parse_clock_skews("-2m") == std::vector<Nanos>{-2min});
}

TEST_CASE("clock skews: an empty item, a missing unit, a bare sign or too many are errors") {
  CHECK(mentions(parse_clock_skews("").error(), "empty item"));
  CHECK(mentions(parse_clock_skews("0,,+5ms").error(), "empty item"));
  CHECK(mentions(parse_clock_skews("0,").error(), "empty item"));
  CHECK(mentions(parse_clock_skews("0,500").error(), "'500' needs a unit"));
  CHECK(mentions(parse_clock_skews("+").error(), "'+' has a sign but no duration"));
  CHECK(mentions(parse_clock_skews("+-5ms").error(), "not a duration"));
  CHECK(mentions(parse_clock_skews("5 ms").error(), "unknown unit"));
  std::string sixteen = "0";
  for (size_t i = 1; i < k_max_clock_skews; ++i)
    sixteen += ",+" + std::to_string(i) + "ms";
  CHECK(parse_clock_skews(sixteen)->size() == k_max_clock_skews);
  CHECK(mentions(parse_clock_skews(sixteen + ",+1s").error(), "more than 16 offsets"));
}

TEST_CASE("clock skews: each formats with its sign, and the list parses again") {
  CHECK(format_clock_skew(0ns) == "0ms");
  CHECK(format_clock_skew(800ms) == "+800ms");
  CHECK(format_clock_skew(-1500ms) == "-1.5s");
  const std::vector<Nanos> skews{0ns, 800ms, -250ms, 2s};
  CHECK(format_clock_skews(skews) == "0,+800ms,-250ms,+2s");
  CHECK(*parse_clock_skews(format_clock_skews(skews)) == skews);
}

TEST_CASE("--clock-skew fills the load of redis, http and compare; a bad list exits 64") {
  CHECK(parse_arguments({"redis", "--clock-skew", "0,+800ms"}).config.load.clock_skews ==
        std::vector<Nanos>{0ns, 800ms});
  CHECK(parse_arguments({"http", "http://127.0.0.1:1/", "--clock-skew", "-1s"})
            .config.load.clock_skews == std::vector<Nanos>{-1s});
  CHECK(parse_arguments({"compare", "--clock-skew", "0,+1s"}).config.load.clock_skews.size() == 2);
  CHECK(parse_arguments({"redis"}).config.load.clock_skews.empty());
  const std::string bad = usage_error({"redis", "--clock-skew", "0,800"});
  CHECK(mentions(bad, "--clock-skew: '800' needs a unit"));
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--clock-skew", ""}), "--clock-skew"));
  // probe has no clients with clocks of their own to skew.
  CHECK(mentions(usage_error({"probe", "--clock-skew", "0,+1s"}), "--clock-skew"));
}

TEST_CASE("--time-source: one for redis, a list for compare, redis by default") {
  const auto defaults = parse_arguments({"redis"}).config.redis;
  CHECK(defaults.time_sources == std::vector<TimeSource>{TimeSource::redis});
  CHECK_FALSE(defaults.time_source_given);
  const auto client = parse_arguments({"redis", "--time-source", "client"}).config.redis;
  CHECK(client.time_sources == std::vector<TimeSource>{TimeSource::client});
  CHECK(client.time_source_given);
  CHECK(parse_arguments({"redis", "-s", "gcra", "--time-source", "redis"})
            .config.redis.time_sources == std::vector<TimeSource>{TimeSource::redis});
  CHECK(parse_arguments({"redis", "-s", "fixed-window", "--time-source", "client"})
            .config.redis.time_source_given);
  CHECK(parse_arguments({"compare", "--strategies", "lua", "--time-source", "redis,client"})
            .config.redis.time_sources ==
        std::vector<TimeSource>{TimeSource::redis, TimeSource::client});
}

TEST_CASE("--time-source is refused where no built-in reads the time it names") {
  CHECK(mentions(usage_error({"redis", "--time-source", "server"}),
                 "--time-source: expected redis or client, got 'server'"));
  CHECK(mentions(usage_error({"redis", "--time-source", "redis,client"}), "takes one"));
  CHECK(mentions(usage_error({"compare", "--time-source", "client,client"}), "named twice"));
  CHECK(mentions(usage_error({"compare", "--time-source", "redis,"}), "empty name"));
  const TempScript file;
  const std::string script =
      usage_error({"redis", "--script", file.path.c_str(), "--time-source", "client"});
  CHECK(mentions(script, "--time-source: applies to the built-in strategies"));
  CHECK(mentions(script, "{now_ms}"));
  for (const char* strategy : {"naive", "incr-expire", "fixed-first-hit"}) {
    CAPTURE(strategy);
    CHECK(mentions(usage_error({"redis", "-s", strategy, "--time-source", "client"}),
                   "keeps no clock: its windows are Redis TTLs"));
  }
  CHECK(mentions(usage_error({"redis", "-s", "fixed-window", "--time-source", "redis"}),
                 "fixed-window names its key by the client's clock"));
  CHECK(
      mentions(usage_error({"compare", "--url", "http://127.0.0.1:1/", "--time-source", "client"}),
               "an HTTP endpoint"));
  // http has no built-in strategy at all.
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--time-source", "client"}),
                 "--time-source"));
}

TEST_CASE("a built-in reading the client's clock gets {now_ms} as its last argument") {
  using rlcheck::config::Strategy;
  rlcheck::redis::StrategyParams params;
  params.instance_id = "ab12";
  params.refill = {5, 1s};
  params.burst = 5;
  for (const Strategy kind : {Strategy::sliding_window, Strategy::token_bucket, Strategy::gcra,
                              Strategy::sliding_counter}) {
    CAPTURE(static_cast<int>(kind));
    params.kind = kind;
    params.time_source = TimeSource::redis;
    const auto redis_time = rlcheck::redis::builtin_arg_templates(params);
    params.time_source = TimeSource::client;
    auto client_time = rlcheck::redis::builtin_arg_templates(params);
    REQUIRE(client_time.size() == redis_time.size() + 1);
    CHECK(client_time.back() == "{now_ms}");
    client_time.pop_back();
    CHECK(client_time == redis_time);
  }
  // The documented positions: ARGV[4], or ARGV[3] for the sliding-window counter.
  params.kind = Strategy::sliding_counter;
  CHECK(rlcheck::redis::builtin_arg_templates(params).size() == 3);
  params.kind = Strategy::sliding_window;
  CHECK(rlcheck::redis::builtin_arg_templates(params).size() == 4);
  // fixed-first-hit keeps no clock: nothing to pass.
  params.kind = Strategy::fixed_first_hit;
  CHECK(rlcheck::redis::builtin_arg_templates(params).size() == 2);
}

TEST_CASE("workers sharing a test must agree on the clock skews and the time source") {
  const auto fingerprint = [](std::vector<const char*> args) {
    return rlcheck::targets::test_fingerprint(parse_arguments(std::move(args)).config);
  };
  const std::string skewed = fingerprint({"redis", "--clock-skew", "0,+800ms"});
  CHECK(mentions(skewed, "clock_skew=0,+800ms\n"));
  CHECK(mentions(skewed, "time_source=redis\n"));
  CHECK(rlcheck::coord::first_difference(fingerprint({"redis", "--clock-skew", "0,+500ms"}),
                                         skewed) ==
        "clock_skew=0,+500ms there, clock_skew=0,+800ms here");
  CHECK(mentions(fingerprint({"redis", "--time-source", "client"}), "time_source=client\n"));
  CHECK(mentions(fingerprint({"redis"}), "clock_skew=\n"));
}
