#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "base/build_info.hpp"
#include "base/exit_code.hpp"
#include "cli/command_line.hpp"
#include "command_line_support.hpp"

using rlcheck::base::ExitCode;
using rlcheck::base::FatalError;
using rlcheck::cli::ParsedCommandLine;
using rlcheck::config::ColorMode;
using rlcheck::config::Command;
using rlcheck::config::Strategy;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;
using namespace std::chrono_literals;

namespace {

ParsedCommandLine parse(std::vector<const char*> args) {
  return parse_arguments(std::move(args));
}

// A real file for --script, removed when the test ends.
struct TempScript {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("rlcheck_unit_" + std::to_string(getpid()) + ".lua");
  TempScript() { std::ofstream(path) << "return 1\n"; }
  ~TempScript() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("redis with no flags takes the documented defaults") {
  const auto parsed = parse({"redis"});
  CHECK_FALSE(parsed.immediate_output.has_value());
  const auto& c = parsed.config;
  CHECK(c.command == Command::drive);
  CHECK(c.kind == "redis");
  CHECK(c.load.requests == 200);
  CHECK(c.load.concurrency == 50);
  CHECK(c.load.runs == 4);
  CHECK(c.load.threads == 1);
  CHECK(c.load.interval == 0s);
  CHECK(c.load.timeout == 5s);
  CHECK(c.checks.limit == 10);
  CHECK(c.checks.window == 60s);
  CHECK_FALSE(c.checks.exact);
  CHECK(c.checks.max_errors == 0);
  CHECK_FALSE(c.checks.max_retry_after.has_value());
  CHECK(c.redis.strategy == Strategy::sliding_window);
  CHECK_FALSE(c.redis.url.has_value());
  CHECK_FALSE(c.redis.key.has_value());
  CHECK(c.output.color == ColorMode::auto_detect);
  CHECK_FALSE(c.seed.has_value());
  CHECK(c.command_line == std::vector<std::string>{"rlcheck", "redis"});
}

TEST_CASE("values given on the command line reach the config") {
  const auto c = parse({"redis",
                        "-n",
                        "1000",
                        "-p",
                        "8",
                        "-r",
                        "2",
                        "-l",
                        "25",
                        "-w",
                        "1m",
                        "--threads",
                        "4",
                        "--interval",
                        "10ms",
                        "--timeout",
                        "2s",
                        "-s",
                        "gcra",
                        "--burst",
                        "30",
                        "--refill",
                        "5/s",
                        "--seed",
                        "42",
                        "--color",
                        "never",
                        "--key",
                        "rl:k",
                        "--reset",
                        "--exact",
                        "--max-retry-after",
                        "90s",
                        "--redis",
                        "redis://localhost:6380/1"})
                     .config;
  CHECK(c.load.requests == 1000);
  CHECK(c.load.concurrency == 8);
  CHECK(c.load.runs == 2);
  CHECK(c.checks.limit == 25);
  CHECK(c.checks.window == 1min);
  CHECK(c.load.threads == 4);
  CHECK(c.load.interval == 10ms);
  CHECK(c.load.timeout == 2s);
  CHECK(c.redis.strategy == Strategy::gcra);
  CHECK(c.checks.burst == 30);
  REQUIRE(c.checks.refill.has_value());
  CHECK(c.checks.refill->tokens == 5);
  CHECK(c.checks.refill->period == 1s);
  CHECK(c.seed == 42u);
  CHECK(c.output.color == ColorMode::never);
  CHECK(c.redis.key == "rl:k");
  CHECK(c.redis.reset);
  CHECK(c.checks.exact);
  CHECK(c.checks.max_retry_after == 90s);
  CHECK(c.redis.url == "redis://localhost:6380/1");
}

TEST_CASE("bad counts are usage errors naming the flag") {
  CHECK(mentions(usage_error({"redis", "-n", "0"}), "--requests"));
  CHECK(mentions(usage_error({"redis", "-p", "-1"}), "--concurrency"));
  CHECK(mentions(usage_error({"redis", "-r", "0"}), "--runs"));
  CHECK(mentions(usage_error({"redis", "-l", "0"}), "--limit"));
  CHECK(mentions(usage_error({"redis", "--max-errors", "-1"}), "--max-errors"));
  CHECK(mentions(usage_error({"redis", "--burst", "0"}), "--burst"));
  CHECK(mentions(usage_error({"redis", "-n", "many"}), "--requests"));
}

TEST_CASE("bad durations are usage errors naming the flag") {
  CHECK(mentions(usage_error({"redis", "--window", "0"}), "--window"));
  CHECK(mentions(usage_error({"redis", "--window", "0s"}), "--window"));
  CHECK(mentions(usage_error({"redis", "--window", "500us"}), "--window"));
  const std::string parsecs = usage_error({"redis", "--window", "5parsecs"});
  CHECK(mentions(parsecs, "--window"));
  CHECK(mentions(parsecs, "5parsecs"));
  CHECK(mentions(usage_error({"redis", "--timeout", "0ms"}), "--timeout"));
  CHECK(mentions(usage_error({"redis", "--interval", "soon"}), "--interval"));
  CHECK(mentions(usage_error({"redis", "--max-retry-after", "5"}), "--max-retry-after"));
  CHECK(mentions(usage_error({"redis", "--refill", "5"}), "--refill"));
}

TEST_CASE("bad names and values are usage errors naming the flag") {
  const std::string strategy = usage_error({"redis", "--strategy", "bogus"});
  CHECK(mentions(strategy, "--strategy"));
  CHECK(mentions(strategy, "bogus"));
  CHECK(mentions(usage_error({"redis", "--color", "purple"}), "--color"));
  CHECK(mentions(usage_error({"redis", "--seed", "abc"}), "--seed"));
  CHECK(mentions(usage_error({"redis", "--seed", "12abc"}), "--seed"));
  CHECK(mentions(usage_error({"redis", "--redis", "redis://h:0"}), "--redis"));
  CHECK(parse({"redis", "--redis", "rediss://h"}).config.redis.url == "rediss://h");
  CHECK(mentions(usage_error({"redis", "--key", ""}), "--key"));
}

TEST_CASE("a negative seed is refused rather than wrapped around") {
  CHECK(mentions(usage_error({"redis", "--seed=-5"}), "--seed"));
}

TEST_CASE("cross-flag rules are usage errors naming the flag") {
  CHECK(mentions(usage_error({"redis", "--threads", "3", "-p", "2"}), "--threads"));
  CHECK(mentions(usage_error({"redis", "--reset"}), "--reset"));
  CHECK(mentions(usage_error({"redis", "--arg", "{limit}"}), "--arg"));
  CHECK(mentions(usage_error({"redis", "--json", "--hook"}), "--json"));
}

TEST_CASE("--script needs an existing file and validates --arg templates") {
  CHECK(mentions(usage_error({"redis", "--script", "/no/such/file"}), "--script"));

  TempScript script;
  const std::string path = script.path.string();
  const std::string bogus = usage_error({"redis", "--script", path.c_str(), "--arg", "{bogus}"});
  CHECK(mentions(bogus, "--arg"));
  CHECK(mentions(bogus, "{bogus}"));

  const auto c =
      parse({"redis", "--script", path.c_str(), "--arg", "{limit}", "--arg", "user-{seq}"}).config;
  CHECK(c.redis.strategy == Strategy::script);
  CHECK(c.redis.script_path == path);
  CHECK(c.redis.script_args == std::vector<std::string>{"{limit}", "user-{seq}"});
}

TEST_CASE("unknown flags and a missing command are usage errors") {
  CHECK(mentions(usage_error({"redis", "--bogus-flag"}), "--bogus-flag"));
  CHECK(mentions(usage_error({}), "command"));
  CHECK_THROWS_AS(parse({"nonsense"}), FatalError);
}

TEST_CASE("--version and --help give immediate output instead of a run") {
  const auto version = parse({"--version"});
  REQUIRE(version.immediate_output.has_value());
  CHECK(mentions(*version.immediate_output, rlcheck::base::version()));

  const auto help = parse({"--help"});
  REQUIRE(help.immediate_output.has_value());
  CHECK(mentions(*help.immediate_output, "redis"));
  CHECK(mentions(*help.immediate_output, "compare"));

  const auto redis_help = parse({"redis", "--help"});
  REQUIRE(redis_help.immediate_output.has_value());
  CHECK(mentions(*redis_help.immediate_output, "--strategy"));
}

TEST_CASE("each command's help names its own defaults and every placeholder") {
  const std::string redis_help = *parse({"redis", "--help"}).immediate_output;
  const std::string http_help = *parse({"http", "--help"}).immediate_output;
  CHECK(mentions(redis_help, "fresh limiter state (default 4)"));
  CHECK(mentions(http_help, "fresh limiter state (default 1)"));
  CHECK_FALSE(mentions(http_help, "(default 4)"));
  CHECK(mentions(http_help, "the limit being verified (default: the advertised one)"));
  // --arg, the URL, -H and -d list the same placeholders, {id}, {group} and {cost} among them.
  const std::string every =
      "{limit} {window_ms} {window_s} {uuid} {seq} {run} {id} {group} {cost} {now_ms}";
  CHECK(mentions(redis_help, every));
  size_t http_lists = 0;
  for (size_t at = http_help.find(every); at != std::string::npos;
       at = http_help.find(every, at + 1))
    ++http_lists;
  CHECK(http_lists == 3);
}

TEST_CASE("compare takes a list of strategies") {
  const auto c = parse({"compare", "--strategies", "naive,gcra"}).config;
  CHECK(c.command == Command::compare);
  CHECK(c.compare_strategies == std::vector<Strategy>{Strategy::naive, Strategy::gcra});

  const auto defaults = parse({"compare"}).config;
  CHECK(defaults.compare_strategies ==
        std::vector<Strategy>{Strategy::naive, Strategy::sliding_window});
}

TEST_CASE("compare refuses bad lists") {
  CHECK(mentions(usage_error({"compare", "--strategies", "naive,,gcra"}), "--strategies"));
  CHECK(mentions(usage_error({"compare", "--strategies", "naive,bogus"}), "bogus"));
  CHECK(mentions(usage_error({"compare", "--strategies", ""}), "--strategies"));
}

TEST_CASE("compare takes your scripts, each with the --arg values that follow it") {
  TempScript first;
  const std::string a = first.path.string();
  const std::string b = a + ".second.lua";
  std::filesystem::copy_file(a, b, std::filesystem::copy_options::overwrite_existing);
  const auto c = parse({"compare", "--arg", "{limit}", "--script", a.c_str(), "--arg", "x",
                        "--script", b.c_str(), "--arg", "y", "--arg", "{uuid}"})
                     .config;
  std::filesystem::remove(b);
  // Without --strategies, only the scripts; shared --arg values come first in each.
  CHECK(c.compare_strategies.empty());
  REQUIRE(c.compare_scripts.size() == 2);
  CHECK(c.compare_scripts[0].path == a);
  CHECK(c.compare_scripts[0].args == std::vector<std::string>{"{limit}", "x"});
  CHECK(c.compare_scripts[1].path == b);
  CHECK(c.compare_scripts[1].args == std::vector<std::string>{"{limit}", "y", "{uuid}"});

  const auto mixed = parse({"compare", "--strategies", "naive", "--script", a.c_str()}).config;
  CHECK(mixed.compare_strategies == std::vector<Strategy>{Strategy::naive});
  CHECK(mixed.compare_scripts.size() == 1);

  CHECK(mentions(usage_error({"compare", "--script", "/nonexistent/x.lua"}), "--script"));
  CHECK(mentions(usage_error({"compare", "--script", a.c_str(), "--arg", "{bogus}"}), "--arg"));
  CHECK(
      mentions(usage_error({"compare", "--url", "http://h/", "--script", a.c_str()}), "--script"));
  CHECK(mentions(usage_error({"redis", "--script", a.c_str(), "--script", a.c_str()}),
                 "--script: given 2 times; rlcheck redis tests one script"));
}

TEST_CASE("CLI11's messages are said in rlcheck's words, naming the flag") {
  CHECK(usage_error({"redis", "-l", "5", "-l", "6"}) ==
        "--limit: given 2 times; give it once (the last one would not win)");
  CHECK(usage_error({"redis", "-p", "abc"}) == "--concurrency: expected a whole number, got 'abc'");
  CHECK(usage_error({"redis", "-n", "1.5"}) == "--requests: expected a whole number, got '1.5'");
  CHECK(usage_error({"redis", "-p"}) == "--concurrency: needs a whole number after it");
  CHECK(usage_error({"http", "http://h/", "-H"}) == "--header: needs a value after it");
  CHECK(usage_error({"redis", "--exact=maybe"}) ==
        "--exact: a flag, it takes no value (got 'maybe')");
  CHECK(mentions(usage_error({"redis", "foo"}),
                 "foo: unexpected argument; rlcheck redis takes options only"));
  CHECK(mentions(usage_error({"probe", "http://a/", "b"}),
                 "b: unexpected argument; rlcheck probe takes one URL"));
  CHECK(mentions(usage_error({"http"}), "rlcheck http: the endpoint's URL is required"));
  CHECK(mentions(usage_error({"run"}), "rlcheck run: name scenario files"));
  for (const std::string& message :
       {usage_error({"redis", "-l", "5", "-l", "6"}), usage_error({"redis", "-p", "abc"}),
        usage_error({"redis", "-p"}), usage_error({"redis", "foo"})}) {
    CHECK_FALSE(mentions(message, "At Most"));
    CHECK_FALSE(mentions(message, "Could not convert"));
    CHECK_FALSE(mentions(message, "required INT missing"));
    CHECK_FALSE(mentions(message, "The following argument"));
  }
}

TEST_CASE("a flag typed as a command names the command that takes it") {
  const std::string message = usage_error({"find-max"});
  CHECK(mentions(message, "find-max: unknown command; did you mean the option --find-max?"));
  CHECK(mentions(message, "rlcheck redis --find-max"));
  CHECK(mentions(usage_error({"explian"}), "did you mean explain?"));
}

TEST_CASE("explain takes a check id") {
  const auto c = parse({"explain", "key-ttl"}).config;
  CHECK(c.command == Command::explain);
  CHECK(c.explain_id == "key-ttl");
  CHECK(parse({"explain"}).config.explain_id.empty());
}

TEST_CASE("the open model takes --rate and --duration together and sends rate x duration") {
  const auto parsed = parse({"redis", "--rate", "40/s", "--duration", "5s", "--identities", "3"});
  const auto& c = parsed.config;
  REQUIRE(c.load.rate.has_value());
  CHECK(c.load.rate->tokens == 40);
  CHECK(c.load.rate->period == 1s);
  CHECK(c.load.requests == 200);
  CHECK(c.load.identities == 3);
  CHECK(parse({"redis", "--rate", "3/2s", "--duration", "1s"}).config.load.requests == 1);
}

TEST_CASE("open-model flags refuse what contradicts them, naming the flag") {
  CHECK(mentions(usage_error({"redis", "--rate", "40/s"}), "--rate"));
  CHECK(mentions(usage_error({"redis", "--duration", "5s"}), "--duration"));
  CHECK(mentions(usage_error({"redis", "--rate", "40/s", "--duration", "5s", "-n", "10"}),
                 "--requests"));
  CHECK(mentions(usage_error({"redis", "--rate", "40/s", "--duration", "5s", "--interval", "1s"}),
                 "--interval"));
  CHECK(mentions(usage_error({"redis", "--rate", "fast", "--duration", "5s"}), "--rate"));
  CHECK(mentions(usage_error({"redis", "--rate", "0/s", "--duration", "5s"}), "--rate"));
  CHECK(mentions(usage_error({"redis", "--rate", "1/m", "--duration", "1s"}), "--duration"));
  CHECK(mentions(usage_error({"redis", "--identities", "0"}), "--identities"));
  CHECK(mentions(usage_error({"redis", "--contract", "leaky"}), "--contract"));
}

TEST_CASE("--source-address reaches the config for http, redis and compare, and names bad items") {
  const auto http =
      parse({"http", "http://127.0.0.1:1/", "--source-address", "127.0.0.1-127.0.0.3"});
  CHECK(http.config.load.source_addresses ==
        std::vector<std::string>{"127.0.0.1", "127.0.0.2", "127.0.0.3"});
  const auto redis = parse({"redis", "--source-address", "10.0.0.5,::1"});
  CHECK(redis.config.load.source_addresses == std::vector<std::string>{"10.0.0.5", "::1"});
  CHECK(parse({"compare", "--source-address", "127.0.0.2"}).config.load.source_addresses.size() ==
        1);
  CHECK(parse({"redis"}).config.load.source_addresses.empty());
  const std::string bad = usage_error({"http", "http://127.0.0.1:1/", "--source-address", "nope"});
  CHECK(mentions(bad, "--source-address"));
  CHECK(mentions(bad, "'nope'"));
  CHECK(mentions(usage_error({"redis", "--source-address", "127.0.0.9-127.0.0.1"}),
                 "--source-address"));
}

TEST_CASE("contract parameters, --verify-retry-after and --html reach the config, for http too") {
  const auto parsed =
      parse({"http", "http://127.0.0.1:1/", "--limit", "5", "--contract", "token-bucket", "--burst",
             "4", "--refill", "2/s", "--verify-retry-after", "--html", "t.html"});
  const auto& c = parsed.config;
  CHECK(c.checks.contract == "token-bucket");
  CHECK(c.checks.burst == 4);
  REQUIRE(c.checks.refill.has_value());
  CHECK(c.checks.refill->tokens == 2);
  CHECK(c.checks.verify_retry_after);
  CHECK(c.output.html_path == "t.html");
}

TEST_CASE("an unknown flag names itself and the closest option of the command") {
  const std::string typo = usage_error({"redis", "--concurency", "10"});
  CHECK(mentions(typo, "--concurency"));
  CHECK(mentions(typo, "did you mean --concurrency?"));
  CHECK_FALSE(mentions(typo, "not expected"));
  // The typo is named even where CLI11 would first complain of something else (the URL).
  CHECK(mentions(usage_error({"http", "--concurency", "10"}), "did you mean --concurrency?"));
  CHECK(mentions(usage_error({"http", "http://h/", "--reqests=5"}), "did you mean --requests?"));
  CHECK(mentions(usage_error({"serve", "--strategi", "lua"}), "did you mean --strategy?"));
  const std::string far = usage_error({"redis", "--bogus-flag"});
  CHECK(mentions(far, "--bogus-flag"));
  CHECK_FALSE(mentions(far, "did you mean"));
}

TEST_CASE("an option of another command says where it belongs") {
  const std::string message = usage_error({"serve", "--requests", "5"});
  CHECK(mentions(message, "--requests: not an option of rlcheck serve"));
}

TEST_CASE("an unknown command names the closest command") {
  CHECK(usage_error({"reds"}) == "reds: unknown command; did you mean redis?");
  CHECK(mentions(usage_error({"comprae"}), "did you mean compare?"));
  const std::string far = usage_error({"nonsense"});
  CHECK(mentions(far, "nonsense: unknown command"));
  CHECK(mentions(far, "redis"));
}

TEST_CASE("a value that is exactly a flag of the command is refused, naming both") {
  CHECK(usage_error({"redis", "--html", "-q"}) == "--html: expected a file name, got the flag -q");
  CHECK(usage_error({"redis", "--report", "--json"}) ==
        "--report: expected a file name, got the flag --json");
  CHECK(usage_error({"redis", "-k", "-r", "1"}) == "--key: expected a value, got the flag -r");
  CHECK(mentions(usage_error({"http", "http://h/", "-H", "--insecure"}), "--header"));
  CHECK(mentions(usage_error({"run", "x.json", "--junit", "-q"}), "--junit"));
}

TEST_CASE("values that only start with '-' are values: negative numbers, script arguments") {
  TempScript script;
  const std::string path = script.path.string();
  const auto c = parse({"redis", "--script", path.c_str(), "--arg", "-1", "--arg", "-x", "--arg",
                        "--not-an-option"})
                     .config;
  CHECK(c.redis.script_args == std::vector<std::string>{"-1", "-x", "--not-an-option"});
  // A negative number still reaches the range check that names the flag.
  CHECK(mentions(usage_error({"redis", "-p", "-1"}), "--concurrency"));
  // --opt=VALUE is not looked at, and neither is what follows -- in hook-config.
  CHECK(parse({"redis", "--html=-q"}).config.output.html_path == "-q");
  CHECK(parse({"hook-config", "--", "redis", "--html", "-q"}).config.hook_args ==
        std::vector<std::string>{"redis", "--html", "-q"});
}

TEST_CASE("an explicit --key over several runs needs --reset, as http's --runs needs {run}") {
  const std::string runs = usage_error({"redis", "-k", "team:limiter", "-r", "2"});
  CHECK(mentions(runs, "--runs"));
  CHECK(mentions(runs, "--reset"));
  CHECK(mentions(runs, "first run's state"));
  // The default of 4 runs counts too; then the flag to change is --key's company.
  CHECK(mentions(usage_error({"redis", "-k", "team:limiter"}), "--key"));
  CHECK(mentions(usage_error({"compare", "-k", "team:limiter", "-r", "3"}), "--reset"));
  CHECK(parse({"redis", "-k", "team:limiter", "-r", "1"}).config.redis.key == "team:limiter");
  CHECK(parse({"redis", "-k", "team:limiter", "--reset", "-r", "2"}).config.redis.reset);
}

TEST_CASE("whether --limit and --window were given is recorded, and --records reaches the config") {
  const auto defaults = parse({"http", "http://127.0.0.1:1/"}).config;
  CHECK_FALSE(defaults.checks.limit_given);
  CHECK_FALSE(defaults.checks.window_given);
  CHECK(defaults.checks.window == 60s);
  CHECK(defaults.output.records_path.empty());
  const auto redis = parse({"redis"}).config;
  CHECK_FALSE(redis.checks.limit_given);
  CHECK_FALSE(redis.checks.window_given);
  const auto given =
      parse({"http", "http://127.0.0.1:1/", "-l", "5", "-w", "60s", "--records", "out.csv"}).config;
  CHECK(given.checks.limit_given);
  CHECK(given.checks.window_given);  // even when it equals the default
  CHECK(given.output.records_path == "out.csv");
  CHECK(parse({"compare", "--window", "2s"}).config.checks.window_given);
}

TEST_CASE("http --start-before-boundary needs --window: the boundary precedes any response") {
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--start-before-boundary", "1s"}),
                 "--window"));
  CHECK(parse({"http", "http://127.0.0.1:1/", "--window", "2s", "--start-before-boundary", "1s"})
            .config.load.start_before_boundary == 1s);
}

TEST_CASE("--reply and --script-keys reach the config, with --script only") {
  TempScript script;
  const std::string path = script.path.string();
  const auto defaults = parse({"redis", "--script", path.c_str()}).config;
  CHECK(defaults.redis.reply == rlcheck::config::ReplyFormat::contract);
  CHECK(defaults.redis.script_keys == 1);

  const auto c =
      parse({"redis", "--script", path.c_str(), "--reply", "cell", "--script-keys", "2"}).config;
  CHECK(c.redis.reply == rlcheck::config::ReplyFormat::cell);
  CHECK(c.redis.script_keys == 2);
  CHECK(parse({"redis", "--script", path.c_str(), "--reply", "counter"}).config.redis.reply ==
        rlcheck::config::ReplyFormat::counter);
  CHECK(parse({"redis", "--script", path.c_str(), "--reply", "rate"}).config.redis.reply ==
        rlcheck::config::ReplyFormat::rate);

  const std::string unknown = usage_error({"redis", "--script", path.c_str(), "--reply", "json"});
  CHECK(mentions(unknown, "--reply"));
  CHECK(mentions(unknown, "'json'"));
  CHECK(mentions(unknown, "counter"));
  CHECK(mentions(usage_error({"redis", "--script", path.c_str(), "--script-keys", "0"}),
                 "--script-keys"));
  CHECK(
      mentions(usage_error({"redis", "--reply", "counter"}), "--reply: only applies to --script"));
  CHECK(mentions(usage_error({"redis", "-s", "gcra", "--script-keys", "2"}),
                 "--script-keys: only applies to --script"));
  CHECK(mentions(usage_error({"serve", "--reply", "counter"}), "--reply"));
}

TEST_CASE("--reply count and --hint-resolution reach the config; bad values name the flag") {
  using rlcheck::config::HintResolution;
  TempScript script;
  const std::string path = script.path.string();
  CHECK(parse({"redis", "--script", path.c_str(), "--reply", "count"}).config.redis.reply ==
        rlcheck::config::ReplyFormat::count);
  CHECK(parse({"redis"}).config.checks.hint_resolution == HintResolution::auto_detect);
  CHECK(parse({"redis", "--hint-resolution", "auto"}).config.checks.hint_resolution ==
        HintResolution::auto_detect);
  CHECK(parse({"redis", "--script", path.c_str(), "--hint-resolution", "1ms"})
            .config.checks.hint_resolution == HintResolution::milliseconds);
  CHECK(parse({"redis", "-s", "gcra", "--hint-resolution", "1s"}).config.checks.hint_resolution ==
        HintResolution::seconds);
  CHECK(parse({"compare", "--hint-resolution", "1s"}).config.checks.hint_resolution ==
        HintResolution::seconds);

  const std::string bad = usage_error({"redis", "--hint-resolution", "10ms"});
  CHECK(mentions(bad, "--hint-resolution"));
  CHECK(mentions(bad, "'10ms'"));
  CHECK(mentions(bad, "auto, 1ms or 1s"));
  // cell's hints count whole seconds: judging them to the millisecond could only fail them.
  const std::string cell = usage_error(
      {"redis", "--script", path.c_str(), "--reply", "cell", "--hint-resolution", "1ms"});
  CHECK(mentions(cell, "--hint-resolution"));
  CHECK(mentions(cell, "--reply cell"));
  CHECK(parse({"redis", "--script", path.c_str(), "--reply", "cell", "--hint-resolution", "1s"})
            .config.checks.hint_resolution == HintResolution::seconds);
  // HTTP hints are whole seconds by their headers' grammar: the flag is not there.
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--hint-resolution", "1s"}),
                 "--hint-resolution"));
  CHECK(mentions(usage_error({"redis", "--hint-resolution"}), "--hint-resolution"));
  CHECK(
      mentions(usage_error({"compare", "--url", "http://127.0.0.1:1/", "--hint-resolution", "1s"}),
               "--hint-resolution: applies to a Redis limiter"));
}

TEST_CASE("probe: a URL is an HTTP probe, none a Redis one; --max-time is its budget") {
  const auto http = parse({"probe", "http://127.0.0.1:1/?k={run}", "--max-time", "30s"}).config;
  CHECK(http.command == rlcheck::config::Command::probe);
  CHECK(http.http.urls == std::vector<std::string>{"http://127.0.0.1:1/?k={run}"});
  CHECK(http.probe.max_time == std::chrono::seconds(30));
  const auto redis = parse({"probe", "--strategy", "gcra", "-l", "4", "-w", "2s"}).config;
  CHECK(redis.http.urls.empty());
  CHECK(redis.redis.strategy == rlcheck::config::Strategy::gcra);
  CHECK(redis.checks.window == std::chrono::seconds(2));
  CHECK(redis.probe.max_time == std::chrono::seconds(60));
  // Without {run}: one identity, or one per source address (app/probe_command).
  const auto per_ip =
      parse({"probe", "http://127.0.0.1:1/", "--source-address", "127.0.0.1-127.0.0.2"}).config;
  CHECK(per_ip.load.source_addresses == std::vector<std::string>{"127.0.0.1", "127.0.0.2"});
  CHECK(mentions(usage_error({"probe", "--max-time", "0s"}), "--max-time"));
  CHECK(mentions(usage_error({"probe", "--reset", "x"}), "--reset"));
}

TEST_CASE("--cluster, --embedded-cluster and --pipeline reach the config, with their defaults") {
  const auto defaults = parse({"redis"}).config;
  CHECK_FALSE(defaults.redis.require_cluster);
  CHECK(defaults.redis.embedded_cluster == 0);
  CHECK(defaults.redis.pipeline == 1);

  const auto c =
      parse({"redis", "--cluster", "--embedded-cluster", "3", "--pipeline", "16"}).config;
  CHECK(c.redis.require_cluster);
  CHECK(c.redis.embedded_cluster == 3);
  CHECK(c.redis.pipeline == 16);

  CHECK(parse({"compare", "--pipeline", "1024"}).config.redis.pipeline == 1024);
  CHECK(parse({"serve", "--embedded-cluster", "16"}).config.redis.embedded_cluster == 16);
  CHECK(parse({"probe", "--cluster"}).config.redis.require_cluster);
  CHECK(parse({"redis", "--redis", "redis://h:7000", "--cluster"}).config.redis.require_cluster);
}

TEST_CASE("--embedded-cluster and --pipeline refuse what cannot be, naming the flag") {
  CHECK(mentions(usage_error({"redis", "--embedded-cluster", "0"}), "--embedded-cluster"));
  CHECK(mentions(usage_error({"redis", "--embedded-cluster", "17"}), "between 1 and 16"));
  const std::string both =
      usage_error({"redis", "--redis", "redis://h", "--embedded-cluster", "3"});
  CHECK(mentions(both, "--embedded-cluster"));
  CHECK(mentions(both, "--redis"));
  CHECK(mentions(usage_error({"redis", "--pipeline", "0"}), "--pipeline"));
  CHECK(mentions(usage_error({"compare", "--pipeline", "1025"}), "between 1 and 1024"));
  // Not an option of these commands (serve keeps its own pool; probe one request at a time).
  CHECK(mentions(usage_error({"serve", "--pipeline", "2"}), "--pipeline"));
  CHECK(mentions(usage_error({"http", "http://h/", "--cluster"}), "--cluster"));
  // compare and probe of HTTP endpoints: the Redis flags do not apply.
  CHECK(mentions(usage_error({"compare", "--url", "http://a/?k={run}", "--pipeline", "2"}),
                 "--pipeline"));
  CHECK(mentions(usage_error({"probe", "http://a/?k={run}", "--embedded-cluster", "3"}),
                 "--embedded-cluster"));
}

TEST_CASE("the new flags are scenario keys where their command has them") {
  using rlcheck::cli::option_kind;
  using rlcheck::cli::OptionKind;
  for (const char* command : {"redis", "compare", "http", "serve", "probe"}) {
    CAPTURE(command);
    CHECK(option_kind(command, "tls-ca") == OptionKind::value);
    CHECK(option_kind(command, "tls-cert") == OptionKind::value);
    CHECK(option_kind(command, "tls-key") == OptionKind::value);
    CHECK(option_kind(command, "tls-sni") == OptionKind::value);
    CHECK(option_kind(command, "insecure") == OptionKind::flag);
  }
  for (const char* command : {"redis", "compare", "serve", "probe"}) {
    CAPTURE(command);
    CHECK(option_kind(command, "cluster") == OptionKind::flag);
    CHECK(option_kind(command, "embedded-cluster") == OptionKind::value);
  }
  CHECK(option_kind("redis", "pipeline") == OptionKind::value);
  CHECK(option_kind("compare", "pipeline") == OptionKind::value);
  CHECK(option_kind("serve", "pipeline") == OptionKind::none);
  CHECK(option_kind("probe", "pipeline") == OptionKind::none);
  CHECK(option_kind("http", "cluster") == OptionKind::none);
  CHECK(rlcheck::cli::names_a_file("tls-ca"));
  CHECK(rlcheck::cli::names_a_file("tls-cert"));
  CHECK(rlcheck::cli::names_a_file("tls-key"));
  CHECK_FALSE(rlcheck::cli::names_a_file("tls-sni"));
}

TEST_CASE(
    "--summary-md FILE, auto from $GITHUB_STEP_SUMMARY, and --junit-skipped reach the config") {
  const auto output = [](std::vector<const char*> args) { return parse(args).config.output; };
  for (const char* command : {"redis", "http", "compare", "run"}) {
    CAPTURE(command);
    std::vector<const char*> args{command};
    if (std::string(command) == "http")
      args.push_back("http://127.0.0.1:1/");
    if (std::string(command) == "run")
      args.push_back("x.json");
    args.insert(args.end(), {"--summary-md", "s.md", "--junit", "j.xml", "--junit-skipped"});
    const auto given = output(args);
    CHECK(given.summary_md_path == "s.md");
    CHECK_FALSE(given.summary_md_append);
    CHECK(given.junit_skipped);
  }
  ::setenv("GITHUB_STEP_SUMMARY", "/github/step_summary", 1);
  const auto github = output({"redis", "--summary-md", "auto"});
  CHECK(github.summary_md_path == "/github/step_summary");
  CHECK(github.summary_md_append);
  ::unsetenv("GITHUB_STEP_SUMMARY");
  CHECK(output({"redis", "--summary-md", "auto"}).summary_md_path.empty());
  CHECK_FALSE(output({"redis", "--junit", "j.xml"}).junit_skipped);
  CHECK(usage_error({"redis", "--junit-skipped"}) ==
        "--junit-skipped: needs --junit (it lists skipped checks there)");
  CHECK(rlcheck::cli::names_a_file("summary-md"));
}

TEST_CASE("costs are counted by every contract but a queue, and every counter strategy") {
  for (const char* contract : {"fixed:10/1s@first-hit", "sliding-counter:10/1s", "gcra:5,1/s"}) {
    INFO(contract);
    CHECK(parse({"http", "http://127.0.0.1:1/", "--cost", "1-3", "--contract", contract})
              .config.load.costs.weighted());
  }
  CHECK(mentions(
      usage_error({"http", "http://127.0.0.1:1/", "--cost", "1-3", "--contract", "queue:5/s,10"}),
      "but a queue"));
  CHECK(parse({"http", "http://127.0.0.1:1/", "--cost", "2", "--contract", "sliding:10/1s",
               "--contract", "sliding-counter:50/1m"})
            .config.load.costs.weighted());
  for (const char* strategy :
       {"incr-expire", "fixed-window", "fixed-first-hit", "sliding-counter"}) {
    INFO(strategy);
    CHECK(parse({"redis", "--strategy", strategy, "--cost", "1-3"}).config.load.costs.weighted());
  }
}

TEST_CASE("--contract concurrency:C caps requests in progress; --hold states the floor") {
  const auto config =
      parse({"http", "http://127.0.0.1:1/", "--contract", "concurrency:2", "--hold", "300ms"})
          .config;
  CHECK(config.checks.contract == "concurrency");
  CHECK(config.checks.limit == 2);
  REQUIRE(config.checks.hold);
  CHECK(*config.checks.hold == std::chrono::milliseconds(300));
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--hold", "300ms"}),
                 "only with --contract concurrency"));
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--contract", "concurrency:0"}),
                 "not a cap"));
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--contract", "concurrency:2",
                              "--contract", "sliding:10/1s"}),
                 "a contract of its own"));
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--contract", "concurrency:2",
                              "--audit", "stream"}),
                 "--audit stream: not with --contract concurrency"));
  CHECK(mentions(
      usage_error({"http", "http://127.0.0.1:1/", "--contract", "concurrency:2", "--cost", "2"}),
      "concurrency cap"));
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--contract", "concurrency:2",
                              "--virtual-clock"}),
                 "only real time"));
}

TEST_CASE("--strategy concurrency is serve's, with --hold") {
  const auto config =
      parse({"serve", "--strategy", "concurrency", "--limit", "2", "--hold", "400ms"}).config;
  CHECK(config.redis.strategy == rlcheck::config::Strategy::concurrency);
  REQUIRE(config.checks.hold);
  CHECK(*config.checks.hold == std::chrono::milliseconds(400));
  CHECK(mentions(usage_error({"serve", "--strategy", "concurrency"}), "--hold"));
  CHECK(mentions(usage_error({"redis", "--strategy", "concurrency"}), "only an HTTP server"));
  CHECK(mentions(usage_error({"compare", "--strategies", "lua,concurrency"}), "rlcheck serve"));
}
