// --stages and --arrivals on the command line: what reaches the config, and each refusal
// (exit 64) naming its flag.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "command_line_support.hpp"
#include "runner/shared_test.hpp"
#include "targets/target_kind.hpp"

using rlcheck::config::Arrivals;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;
using namespace std::chrono_literals;

namespace {

// A --script that takes now as an argument, for --virtual-clock; removed when the test ends.
struct ClockScript {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("rlcheck_shapes_" + std::to_string(getpid()) + ".lua");
  ClockScript() { std::ofstream(path) << "return 1\n"; }
  ~ClockScript() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("--stages plans the requests of each run, --arrivals spaces them") {
  const auto parsed = parse_arguments({"redis", "--stages", "2s:100/s,2s:400/s,1s:0/s"});
  const auto& load = parsed.config.load;
  REQUIRE(load.stages.size() == 3);
  CHECK(load.stages[1].duration == 2s);
  CHECK(load.stages[1].to_per_s == 400);
  CHECK(load.requests == 800);
  CHECK_FALSE(load.rate.has_value());
  CHECK(load.open_model());
  CHECK(load.arrivals == Arrivals::uniform);

  CHECK(parse_arguments(
            {"http", "http://127.0.0.1:1/", "--stages", "1s:10/s", "--arrivals", "poisson"})
            .config.load.arrivals == Arrivals::poisson);
  CHECK(parse_arguments({"redis", "--rate", "10/s", "--duration", "1s", "--arrivals", "poisson"})
            .config.load.arrivals == Arrivals::poisson);
  CHECK(parse_arguments({"redis", "--arrivals", "uniform"}).config.load.arrivals ==
        Arrivals::uniform);
  CHECK_FALSE(parse_arguments({"redis"}).config.load.open_model());
}

TEST_CASE("--stages and --arrivals refuse what contradicts them, naming the flag") {
  for (const char* other : {"--rate", "--duration", "--requests", "--interval"}) {
    CAPTURE(other);
    const char* value = std::string(other) == "--rate"       ? "10/s"
                        : std::string(other) == "--requests" ? "10"
                                                             : "1s";
    const std::string message = usage_error({"redis", "--stages", "1s:10/s", other, value});
    CHECK(message.starts_with("--stages: "));
    CHECK(mentions(message, other));
  }
  CHECK(usage_error({"redis", "--stages", "1s:10"}).starts_with("--stages: "));
  CHECK(usage_error({"redis", "--stages", "1s:0/s"}).starts_with("--stages: "));
  CHECK(mentions(usage_error({"redis", "--stages", "1ms:1/s"}), "plans no request"));
  CHECK(mentions(usage_error({"redis", "--stages", "50000s:100000/s"}), "more than 2000000000"));
  CHECK(usage_error({"redis", "--arrivals", "bursty"}).starts_with("--arrivals: "));
  CHECK(usage_error({"redis", "--arrivals", "poisson"}).starts_with("--arrivals poisson: "));
  CHECK(usage_error({"redis", "--interval", "1s", "--arrivals", "poisson"})
            .starts_with("--arrivals poisson: "));
}

TEST_CASE("--stages is a schedule the virtual clock runs on") {
  const ClockScript script;
  const auto parsed = parse_arguments({"redis", "--script", script.path.c_str(), "--arg",
                                       "{now_ms}", "--virtual-clock", "--stages", "1h:10/s"});
  CHECK(parsed.config.load.virtual_clock);
  CHECK(parsed.config.load.requests == 18'000);
  CHECK(mentions(
      usage_error({"redis", "--script", script.path.c_str(), "--arg", "{now_ms}", "--virtual-clock",
                   "-r", "2", "--stages", "270000h:0.001/s,270000h:0/s"}),
      "100 virtual years"));
}

TEST_CASE("many hosts: workers with other stages, arrivals or seed run another test") {
  const auto fingerprint = [](std::vector<const char*> args) {
    return rlcheck::targets::test_fingerprint(parse_arguments(std::move(args)).config);
  };
  const std::string base = fingerprint({"redis", "--stages", "1s:10/s", "--seed", "1"});
  CHECK(mentions(base, "stages=1s:10/s\n"));
  CHECK(base == fingerprint({"redis", "--stages", "1s:10/s", "--seed", "1"}));
  CHECK(base != fingerprint({"redis", "--stages", "1s:20/s", "--seed", "1"}));
  CHECK(base != fingerprint({"redis", "--stages", "1s:10/s", "--seed", "2"}));
  CHECK(base !=
        fingerprint({"redis", "--stages", "1s:10/s", "--seed", "1", "--arrivals", "poisson"}));
}

TEST_CASE("--audit streams long runs, and names what rules the stream out") {
  using rlcheck::config::AuditMode;
  const auto mode = [](std::vector<const char*> args) {
    return parse_arguments(std::move(args)).config.checks.audit;
  };
  CHECK(mode({"redis", "-n", "1000"}) == AuditMode::batch);
  CHECK(mode({"redis", "-n", "20000000"}) == AuditMode::stream);
  CHECK(mode({"redis", "-n", "1000", "--audit", "stream"}) == AuditMode::stream);
  CHECK(mode({"redis", "-n", "20000000", "--audit", "batch"}) == AuditMode::batch);
  // Runs that cannot stream stay batch under auto, up to what a batch audit keeps.
  CHECK(mode({"redis", "-n", "20000000", "--verify-retry-after"}) == AuditMode::batch);
  CHECK(usage_error({"redis", "--audit", "sometimes"}).starts_with("--audit: "));
  const std::string refused = usage_error({"redis", "--audit", "stream", "--verify-retry-after"});
  CHECK(refused.starts_with("--audit stream: "));
  CHECK(mentions(refused, "--verify-retry-after"));
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--audit", "stream"}), "http"));
  // An endpoint whose limit and window the flags name can stream.
  CHECK(mode({"http", "http://127.0.0.1:1/", "-l", "5", "-w", "1s", "--audit", "stream"}) ==
        AuditMode::stream);
  const std::string too_many = usage_error({"redis", "-n", "200000000", "--audit", "batch"});
  CHECK(too_many.starts_with("--audit: "));
  CHECK(mentions(too_many, "100000000"));
  CHECK(mentions(usage_error({"redis", "-n", "200000000", "--contract", "queue", "--queue", "2"}),
                 "--contract queue"));
}
