#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/kind_command.hpp"
#include "cli/raw_options.hpp"
#include "config/identity_dist.hpp"
#include "config/reply_format.hpp"
#include "config/source_addresses.hpp"
#include "config/stages.hpp"
#include "config/strategy_name.hpp"
#include "engine/placeholder_template.hpp"
#include "redis/endpoint.hpp"

namespace rlcheck::cli {
namespace {

using base::usage_error;
using config::Nanos;

constexpr int64_t k_max_requests = config::k_max_streamed_requests;
constexpr int64_t k_max_concurrency = 10'000;
constexpr int64_t k_max_threads = 256;
constexpr int64_t k_max_runs = 10'000;

int64_t in_range(const char* flag, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high) {
    throw base::usage_error(
        fmt::format("{}: must be between {} and {}, got {}", flag, low, high, value));
  }
  return value;
}

Nanos positive_duration(const char* flag, const std::string& text) {
  auto parsed = config::parse_duration(text);
  if (!parsed)
    throw base::usage_error(fmt::format("{}: {}", flag, parsed.error()));
  if (parsed->count() <= 0)
    throw base::usage_error(fmt::format("{}: must be above 0, got {}", flag, text));
  return *parsed;
}

config::Strategy strategy_named(const char* flag, const std::string& name) {
  auto strategy = config::parse_strategy(name);
  if (!strategy) {
    throw base::usage_error(fmt::format("{}: unknown strategy '{}'; expected one of {}", flag, name,
                                        config::strategy_names_list()));
  }
  return *strategy;
}

config::ColorMode color_named(const std::string& name) {
  if (name == "auto")
    return config::ColorMode::auto_detect;
  if (name == "always")
    return config::ColorMode::always;
  if (name == "never")
    return config::ColorMode::never;
  throw base::usage_error(fmt::format("--color: expected auto, always or never, got '{}'", name));
}

constexpr int64_t k_max_script_keys = 1'000;

// --reply and --script-keys say how a --script is called and read; nothing else has a reply.
void fill_script_reply(const RawOptions& raw, config::RedisConfig& redis) {
  if (raw.reply) {
    if (!raw.script && raw.compare_scripts.empty())
      throw base::usage_error("--reply: only applies to --script");
    auto format = config::parse_reply_format(*raw.reply);
    if (!format) {
      throw base::usage_error(fmt::format("--reply: unknown format '{}'; expected one of {}",
                                          *raw.reply, config::reply_format_names_list()));
    }
    redis.reply = *format;
  }
  if (raw.script_keys) {
    if (!raw.script && raw.compare_scripts.empty())
      throw base::usage_error("--script-keys: only applies to --script");
    redis.script_keys = in_range("--script-keys", *raw.script_keys, 1, k_max_script_keys);
  }
}

// --hint-resolution: never finer than the hints a reply format carries.
config::HintResolution hint_resolution_named(const std::string& name,
                                             const config::RedisConfig& redis) {
  if (name == "auto")
    return config::HintResolution::auto_detect;
  if (name == "1s")
    return config::HintResolution::seconds;
  if (name != "1ms")
    throw base::usage_error(
        fmt::format("--hint-resolution: expected auto, 1ms or 1s, got '{}'", name));
  if (redis.strategy == config::Strategy::script && redis.reply == config::ReplyFormat::cell) {
    throw base::usage_error(
        "--hint-resolution: 1ms is finer than --reply cell's hints, which count whole seconds; "
        "use auto or 1s");
  }
  return config::HintResolution::milliseconds;
}

// A queue holds an admitted request up to B / R before it leaves: the per-request timeout
// must outlast that, or rlcheck would count the queue's promised waits as timeouts. The
// default timeout grows to the wait plus itself; one given that is too short is a usage error.
void fit_timeout_to_queue(const RawOptions& raw, const config::CheckConfig& checks,
                          config::LoadConfig& load) {
  const config::Rate rate = checks.refill.value_or(config::Rate{checks.limit, checks.window});
  const int64_t depth = checks.queue.value_or(checks.limit);
  const auto longest_wait = std::chrono::duration_cast<config::Nanos>(
      rate.period * static_cast<double>(depth) / static_cast<double>(rate.tokens));
  if (load.timeout > longest_wait + std::chrono::seconds(1))
    return;
  if (raw.timeout == RawOptions{}.timeout) {
    load.timeout += longest_wait;
    return;
  }
  throw base::usage_error(fmt::format(
      "--timeout: {} does not outlast the queue's longest promised wait ({} waiting at {}: {}); "
      "give at least {}",
      raw.timeout, depth, config::format_rate(rate), config::format_duration(longest_wait),
      config::format_duration(longest_wait + std::chrono::seconds(2))));
}

void check_script_args(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    auto parsed = engine::PlaceholderTemplate::parse(arg);
    if (!parsed)
      throw base::usage_error(fmt::format("--arg: {}", parsed.error()));
  }
}

void check_script_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    throw base::usage_error(fmt::format("--script: no such file: {}", path));
}

// redis --release-script: a semaphore's release, which only a concurrency cap judges, and
// only once the hold that places it is stated.
void fill_release_script(const RawOptions& raw, config::Config& config) {
  if (!raw.script) {
    throw base::usage_error(
        "--release-script: needs --script, the acquire script whose admissions it releases");
  }
  if (config.checks.contract != "concurrency") {
    throw base::usage_error(
        "--release-script: only with --contract concurrency:C (a semaphore caps what is in "
        "progress at once, not a rate)");
  }
  if (!raw.hold) {
    throw base::usage_error(
        "--release-script: needs --hold DUR, how long each admission holds its place before "
        "its release is sent");
  }
  if (config.workers.distributed()) {
    throw base::usage_error(
        "--release-script: not with --workers: each host's releases would be judged apart");
  }
  check_script_file(*raw.release_script);
  config.redis.release_script_path = *raw.release_script;
}

void fill_redis(const RawOptions& raw, config::Config& config) {
  config::RedisConfig& redis = config.redis;
  if (raw.redis_url && *raw.redis_url != rlcheck::config::k_embedded_url) {
    auto endpoint = rlcheck::redis::parse_endpoint(*raw.redis_url);
    if (!endpoint)
      throw base::usage_error(fmt::format("--redis: {}", endpoint.error()));
  }
  redis.url = raw.redis_url;
  redis.strategy = strategy_named("--strategy", raw.strategy);
  if (redis.strategy == config::Strategy::leaky_queue && config.command != config::Command::serve) {
    throw base::usage_error(
        "--strategy: leaky-queue holds admitted requests before they leave, which only an HTTP "
        "server can do: run `rlcheck serve --strategy leaky-queue` and test it with `rlcheck "
        "http URL --contract queue`");
  }
  if (redis.strategy == config::Strategy::concurrency && config.command != config::Command::serve) {
    throw base::usage_error(
        "--strategy: concurrency holds admitted requests and releases them once answered, which "
        "only an HTTP server can do: run `rlcheck serve --strategy concurrency --hold DUR` and "
        "test it with `rlcheck http URL --contract concurrency:C`");
  }
  if (raw.script) {
    check_script_file(*raw.script);
    redis.strategy = config::Strategy::script;
    redis.script_path = *raw.script;
  } else if (!raw.args.empty()) {
    throw base::usage_error("--arg: only applies to --script");
  }
  check_script_args(raw.args);
  redis.script_args = raw.args;
  fill_script_reply(raw, redis);
  if (raw.hint_resolution)
    config.checks.hint_resolution = hint_resolution_named(*raw.hint_resolution, redis);
  if (raw.key) {
    if (raw.key->empty())
      throw base::usage_error("--key: must not be empty");
    redis.key = raw.key;
  }
  if (raw.reset && !raw.key) {
    throw base::usage_error("--reset: only applies to an explicit --key (fresh keys start empty)");
  }
  redis.reset = raw.reset;
  // As http's --runs rule: each run must start from a fresh limiter state.
  if (raw.key && !raw.reset && config.load.runs > 1) {
    throw base::usage_error(fmt::format(
        "{}: {} runs{} on the explicit --key {} need --reset (DEL before each run); else later "
        "runs start from the first run's state. Add --reset, or give -r 1",
        raw.runs ? "--runs" : "--key", config.load.runs, raw.runs ? "" : " (the default)",
        *raw.key));
  }
}

void fill_compare(const RawOptions& raw, config::Config& config) {
  config.compare_strategies.clear();
  size_t start = 0;
  while (start <= raw.strategies.size()) {
    size_t comma = raw.strategies.find(',', start);
    if (comma == std::string::npos)
      comma = raw.strategies.size();
    const std::string name = raw.strategies.substr(start, comma - start);
    if (name.empty())
      throw base::usage_error("--strategies: empty name in the list");
    config.compare_strategies.push_back(strategy_named("--strategies", name));
    if (config.compare_strategies.back() == config::Strategy::leaky_queue ||
        config.compare_strategies.back() == config::Strategy::concurrency) {
      throw base::usage_error(
          "--strategies: leaky-queue and concurrency hold admitted requests, which only `rlcheck "
          "serve` can "
          "do; compare its URL with `rlcheck compare --url`");
    }
    start = comma + 1;
  }
  // Your own scripts, after the strategies named (none unless --strategies is given).
  if (raw.compare_scripts.empty())
    return;
  if (!raw.strategies_given)
    config.compare_strategies.clear();
  for (const config::CompareScript& script : raw.compare_scripts) {
    check_script_file(script.path);
    check_script_args(script.args);
  }
  config.compare_scripts = raw.compare_scripts;
}

constexpr int64_t k_max_embedded_masters = 16;
constexpr int64_t k_max_pipeline = 1'024;

// --cluster, --embedded-cluster and --pipeline: how rlcheck speaks to a Redis target.
void fill_topology(const RawOptions& raw, bool http, config::RedisConfig& redis) {
  if (http) {
    if (raw.cluster)
      throw base::usage_error("--cluster: applies to a Redis target, not to an HTTP endpoint");
    if (raw.embedded_cluster)
      throw base::usage_error(
          "--embedded-cluster: applies to a Redis target, not to an HTTP endpoint");
    if (raw.pipeline) {
      throw base::usage_error(
          "--pipeline: applies to a Redis target; an HTTP connection carries one request at a "
          "time");
    }
    return;
  }
  redis.require_cluster = raw.cluster;
  if (raw.embedded_cluster) {
    redis.embedded_cluster = static_cast<int>(
        in_range("--embedded-cluster", *raw.embedded_cluster, 1, k_max_embedded_masters));
    if (raw.redis_url) {
      throw base::usage_error(
          "--embedded-cluster: cannot be combined with --redis (it tests the private cluster it "
          "starts)");
    }
  }
  redis.pipeline =
      static_cast<int>(in_range("--pipeline", raw.pipeline.value_or(1), 1, k_max_pipeline));
}

// --stages LIST instead of --rate and --duration: the requests its ramps plan.
void fill_stages(const RawOptions& raw, config::LoadConfig& load) {
  constexpr const char* k_flag = "--stages";
  const auto refuse_with = [k_flag](const char* other) {
    throw base::usage_error(
        fmt::format("{}: sets the rate and the length of each run, not with {}", k_flag, other));
  };
  if (raw.rate)
    refuse_with("--rate");
  if (raw.duration)
    refuse_with("--duration");
  if (raw.requests)
    refuse_with("--requests");
  if (raw.interval)
    refuse_with("--interval");
  auto stages = config::parse_stages(*raw.stages);
  if (!stages)
    throw base::usage_error(fmt::format("{}: {}", k_flag, stages.error()));
  load.stages = std::move(*stages);
  const uint64_t planned = config::planned_requests(load.stages);
  if (planned < 1) {
    throw base::usage_error(fmt::format("{}: {} plans no request", k_flag, *raw.stages));
  }
  if (planned > static_cast<uint64_t>(k_max_requests)) {
    throw base::usage_error(fmt::format("{}: {} plans {} requests, more than {}", k_flag,
                                        *raw.stages, planned, k_max_requests));
  }
  load.requests = static_cast<int64_t>(planned);
}

// --arrivals: poisson needs an open-model plan to spread its arrivals over.
void fill_arrivals(const RawOptions& raw, config::LoadConfig& load) {
  if (!raw.arrivals)
    return;
  if (*raw.arrivals == "uniform") {
    load.arrivals = config::Arrivals::uniform;
    return;
  }
  if (*raw.arrivals != "poisson") {
    throw base::usage_error(
        fmt::format("--arrivals: expected uniform or poisson, got '{}'", *raw.arrivals));
  }
  if (!load.open_model() && !raw.find_max)
    throw base::usage_error("--arrivals poisson: needs --rate with --duration, or --stages");
  load.arrivals = config::Arrivals::poisson;
}

// --rate R/s with --duration D: R x D requests, request i due at i / R.
void fill_rate(const RawOptions& raw, config::LoadConfig& load) {
  if (!raw.rate)
    throw base::usage_error("--duration: needs --rate (the open model sends at a constant rate)");
  if (!raw.duration)
    throw base::usage_error("--rate: needs --duration (how long to send at that rate)");
  if (raw.requests) {
    throw base::usage_error("--requests: not with --rate (the open model sends rate x duration)");
  }
  if (raw.interval)
    throw base::usage_error("--interval: not with --rate (the rate sets the pace)");
  auto rate = config::parse_rate(*raw.rate);
  if (!rate)
    throw base::usage_error(fmt::format("--rate: {}", rate.error()));
  if (rate->tokens <= 0)
    throw base::usage_error(fmt::format("--rate: must be above 0, got {}", *raw.rate));
  const Nanos duration = positive_duration("--duration", *raw.duration);
  const long double count = static_cast<long double>(duration.count()) * rate->tokens /
                            static_cast<long double>(rate->period.count());
  if (count < 1) {
    throw base::usage_error(
        fmt::format("--duration: {} at {} sends no request", *raw.duration, *raw.rate));
  }
  if (count > k_max_requests) {
    throw base::usage_error(fmt::format("--rate: {} for {} is more than {} requests", *raw.rate,
                                        *raw.duration, k_max_requests));
  }
  load.rate = *rate;
  load.requests = static_cast<int64_t>(count);
}

// --identity-dist: how requests spread over the identities (the checks stay per identity).
config::IdentityDist identity_dist_named(const RawOptions& raw, int64_t identities) {
  const std::string& text = *raw.identity_dist;
  auto dist = config::parse_identity_dist(text);
  if (!dist)
    throw base::usage_error(fmt::format("--identity-dist: {}", dist.error()));
  if (dist->shape == config::IdentityShape::hot && identities < 2) {
    throw base::usage_error(fmt::format(
        "--identity-dist: {} needs at least 2 identities (identity 0 is the hot one, the others "
        "share the rest); give --identities",
        text));
  }
  if (!dist->uniform() && raw.virtual_clock) {
    throw base::usage_error(fmt::format(
        "--identity-dist: {} is not yet on the virtual clock: --virtual-clock walks identities "
        "round robin (leave --identity-dist uniform there)",
        text));
  }
  return *dist;
}

// The open model's plan (--stages, or --rate with --duration) and its arrivals.
// --find-max: --rate and --duration give the search's first step (find_max_options.cpp), which
// --arrivals applies to as to any open model.
// --summary-md FILE is written whole; auto appends to the job summary GitHub names in
// $GITHUB_STEP_SUMMARY, and writes nothing where it is not set (a run outside Actions).
void fill_summary_md(const RawOptions& raw, config::OutputConfig& output) {
  if (raw.summary_md != "auto") {
    output.summary_md_path = raw.summary_md;
    return;
  }
  const char* step_summary = std::getenv("GITHUB_STEP_SUMMARY");
  output.summary_md_path = step_summary != nullptr ? step_summary : "";
  output.summary_md_append = true;
}

void fill_open_model(const RawOptions& raw, config::LoadConfig& load) {
  if (raw.find_max) {
    if (raw.stages)
      throw base::usage_error("--stages: not with --find-max: the search sets each step's rate");
  } else if (raw.stages) {
    fill_stages(raw, load);
  } else if (raw.rate || raw.duration) {
    fill_rate(raw, load);
  }
  fill_arrivals(raw, load);
}

// The kind of target a command line drives: the command typed, else the scheme of the URL that
// probe or compare --url names, else the first kind.
const KindCommand& kind_typed(const RawOptions& raw) {
  if (raw.command == config::Command::drive)
    return *kind_command_named(raw.kind);
  const std::string_view url =
      raw.command == config::Command::probe ? std::string_view(raw.url)
      : raw.command == config::Command::compare && !raw.compare_urls.empty()
          ? std::string_view(raw.compare_urls.front())
          : std::string_view();
  if (url.empty())
    return kind_commands().front();
  if (const KindCommand* kind = kind_command_for_url(url))
    return *kind;
  throw base::usage_error(
      fmt::format("{}: '{}' names no kind of target rlcheck drives (expected {})",
                  raw.command == config::Command::probe ? "URL" : "--url", url, known_schemes()));
}

}  // namespace

config::Config build_config(const RawOptions& raw) {
  config::Config config;
  config.command = raw.command;

  config::LoadConfig& load = config.load;
  load.requests = in_range("--requests", raw.requests.value_or(200), 1, k_max_requests);
  load.concurrency =
      static_cast<int>(in_range("--concurrency", raw.concurrency, 1, k_max_concurrency));
  const bool probe = raw.command == config::Command::probe;
  const KindCommand& kind = kind_typed(raw);
  config.kind = kind.name;
  load.runs = static_cast<int>(in_range(
      "--runs", raw.runs.value_or(kind.limits_from_replies || probe ? 1 : 4), 1, k_max_runs));
  load.threads = static_cast<int>(in_range("--threads", raw.threads, 1, k_max_threads));
  if (load.threads > load.concurrency) {
    throw base::usage_error(
        fmt::format("--threads: {} threads need at least as many connections "
                    "(--concurrency {})",
                    load.threads, load.concurrency));
  }
  load.timeout = positive_duration("--timeout", raw.timeout);
  if (raw.interval)
    load.interval = positive_duration("--interval", *raw.interval);
  fill_open_model(raw, load);
  load.identities = in_range("--identities", raw.identities, 1, k_max_concurrency);
  if (raw.identity_dist)
    load.identity_dist = identity_dist_named(raw, load.identities);
  if (raw.source_address) {
    auto addresses = config::parse_source_addresses(*raw.source_address);
    if (!addresses)
      throw base::usage_error(fmt::format("--source-address: {}", addresses.error()));
    load.source_addresses = std::move(*addresses);
  }

  config::CheckConfig& checks = config.checks;
  checks.limit = in_range("--limit", raw.limit.value_or(10), 1, k_max_requests);
  checks.limit_given = raw.limit.has_value();
  checks.window_given = raw.window_given;
  checks.window = positive_duration("--window", raw.window);
  if (checks.window < std::chrono::milliseconds(1)) {
    throw base::usage_error(fmt::format("--window: must be at least 1ms, got {}", raw.window));
  }
  checks.exact = raw.exact;
  checks.max_errors = in_range("--max-errors", raw.max_errors, 0, k_max_requests);
  if (raw.max_retry_after) {
    checks.max_retry_after = positive_duration("--max-retry-after", *raw.max_retry_after);
  }
  if (raw.start_before_boundary) {
    load.start_before_boundary =
        positive_duration("--start-before-boundary", *raw.start_before_boundary);
    if (load.start_before_boundary >= checks.window) {
      throw base::usage_error("--start-before-boundary: must be shorter than --window");
    }
    // The boundary is placed before the first response could advertise a window.
    if (kind.limits_from_replies && !checks.window_given) {
      throw base::usage_error(fmt::format(
          "--start-before-boundary: needs --window for a {} target (its window is otherwise "
          "read from its replies)",
          kind.name));
    }
    load.boundary_window = checks.window;
  }
  // --contract: a name, a spec with its parameters, or several parts.
  const std::optional<std::string> contract = read_contracts(raw, checks);
  if (raw.burst)
    checks.burst = in_range("--burst", *raw.burst, 1, k_max_requests);
  if (raw.refill) {
    auto rate = config::parse_refill(*raw.refill);
    if (!rate)
      throw base::usage_error(fmt::format("--refill: {}", rate.error()));
    // Steps are a contract's reading: the built-in strategies refill smoothly.
    if (rate->steps && (contract != "token-bucket" || raw.command == config::Command::serve ||
                        raw.command == config::Command::probe)) {
      throw base::usage_error(fmt::format(
          "--refill {}: a refill in steps is a --contract token-bucket reading (the built-in "
          "strategies refill smoothly)",
          *raw.refill));
    }
    checks.refill = *rate;
  }
  if (raw.anchor) {
    if (*raw.anchor != "clock" && *raw.anchor != "first-hit") {
      throw base::usage_error(
          fmt::format("--anchor: expected clock or first-hit, got '{}'", *raw.anchor));
    }
    // A bucket in steps: where its ticks fall.
    const bool stepped = contract == "token-bucket" && checks.refill && checks.refill->steps;
    if (checks.parts.empty() && contract != "fixed" && contract != "sliding-counter" && !stepped) {
      throw base::usage_error(
          fmt::format("--anchor: only with --contract fixed or sliding-counter (windows that start "
                      "somewhere) or token-bucket with --refill K/I,steps (where its ticks fall){}",
                      contract ? fmt::format("; --contract {} has nothing to anchor", *contract)
                               : std::string()));
    }
    // Clients whose clocks were given offsets disagree on where the clock's ticks fall.
    if (stepped && *raw.anchor == "clock" && raw.clock_skew) {
      throw base::usage_error(
          "--anchor clock: with --clock-skew the clients' clocks place a stepped bucket's ticks "
          "apart; leave --anchor out (the ticks judged anywhere)");
    }
    checks.anchor = raw.anchor;
  }
  if (raw.queue) {
    const bool queue_strategy = raw.strategy == "leaky-queue";
    if (contract != "queue" && !queue_strategy) {
      throw base::usage_error(
          "--queue: only with --contract queue (or serve --strategy leaky-queue): a queue's "
          "depth");
    }
    checks.queue = in_range("--queue", *raw.queue, 0, k_max_requests);
  }
  if (raw.nodelay) {
    if (contract != "queue") {
      throw base::usage_error(
          "--nodelay: only with --contract queue: how many excess requests a queue lets through "
          "at once before the rest wait (nginx's limit_req delay=)");
    }
    checks.nodelay = in_range("--nodelay", *raw.nodelay, 0, k_max_requests);
  }
  if (checks.nodelay && checks.nodelay > checks.queue.value_or(checks.limit)) {
    throw base::usage_error(fmt::format(
        "--nodelay: {} is more than the queue's depth {}: at most the queue passes undelayed",
        *checks.nodelay, checks.queue.value_or(checks.limit)));
  }
  if (contract == "queue" && raw.command != config::Command::serve)
    fit_timeout_to_queue(raw, checks, config.load);
  // A slow-down holds a request up to its longest delay: the default timeout grows by it.
  if (checks.slow_down && checks.slow_down->max && raw.timeout == RawOptions{}.timeout)
    config.load.timeout += *checks.slow_down->max;
  const bool concurrency_strategy = raw.strategy == "concurrency";
  if (raw.hold) {
    if (contract != "concurrency" && !concurrency_strategy) {
      throw base::usage_error(
          "--hold: only with --contract concurrency (the least time the endpoint holds each "
          "admitted request, which proves how many were in progress at once) or serve "
          "--strategy concurrency (how long it holds each)");
    }
    checks.hold = positive_duration("--hold", *raw.hold);
  } else if (concurrency_strategy && raw.command == config::Command::serve) {
    throw base::usage_error(
        "--hold: serve --strategy concurrency needs it: how long each admitted request is held "
        "before its reply (the service time a cap is there to bound)");
  }
  if (contract == "concurrency" && raw.virtual_clock) {
    throw base::usage_error(
        "--virtual-clock: a concurrency cap counts requests in progress, which only real time "
        "shows; drop --virtual-clock or --contract concurrency");
  }
  resolve_contract_parts(raw, config);
  checks.verify_retry_after = raw.verify_retry_after;

  config::OutputConfig& output = config.output;
  output.json = raw.json;
  output.report_path = raw.report_path;
  output.junit_path = raw.junit_path;
  if (raw.junit_skipped && raw.junit_path.empty())
    throw base::usage_error("--junit-skipped: needs --junit (it lists skipped checks there)");
  output.junit_skipped = raw.junit_skipped;
  fill_summary_md(raw, output);
  output.html_path = raw.html_path;
  output.records_path = raw.records_path;
  output.hook = raw.hook;
  output.quiet = raw.quiet;
  output.color = color_named(raw.color);
  if (raw.json && raw.hook)
    throw base::usage_error("--json: cannot be combined with --hook (stdout stays empty)");
  if (raw.hook_max_blocks) {
    if (!raw.hook)
      throw base::usage_error("--hook-max-blocks: needs --hook (it caps the stops a hook blocks)");
    output.hook_max_blocks = in_range("--hook-max-blocks", *raw.hook_max_blocks, 1, 1'000'000);
  }
  fill_observe(raw, config);

  if (raw.seed) {
    uint64_t seed = 0;
    const std::string& text = *raw.seed;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      throw base::usage_error(fmt::format("--seed: expected a whole number >= 0, got '{}'", text));
    }
    config.seed = seed;
    load.identity_seed = seed;
  }
  fill_costs(raw, config);

  if (raw.command == config::Command::run) {
    config.scenario_paths = raw.scenario_paths;
    return config;
  }
  if (raw.command == config::Command::hook_config) {
    config.hook_args = raw.hook_args;
    config.merge_settings = raw.merge_settings;
    return config;
  }
  if (raw.command == config::Command::explain) {
    config.explain_id = raw.explain_id;
    return config;
  }
  config.compare_urls = raw.command == config::Command::compare && !raw.compare_urls.empty();
  if (config.compare_urls && !raw.compare_scripts.empty()) {
    throw base::usage_error(
        "--script: compare takes Redis limiters (--strategies, --script) or HTTP endpoints "
        "(--url), not both");
  }
  fill_topology(raw, !kind.state_in_redis, config.redis);
  if (!kind.state_in_redis && raw.hint_resolution) {
    throw base::usage_error(fmt::format(
        "--hint-resolution: applies to a Redis limiter's hints; a {} target's count whole "
        "seconds (Retry-After, RateLimit reset)",
        kind.name));
  }
  kind.fill(raw, config);
  return config;
}

void fill_redis_kind(const RawOptions& raw, config::Config& config) {
  fill_redis(raw, config);
  fill_tls(raw, false, config);
  fill_faults(raw, false, config);
  fill_workers(raw, config);
  fill_find_max(raw, config);
  fill_virtual_clock(raw, false, config);
  if (raw.command == config::Command::probe)
    fill_probe(raw, config);
  if (config.command == config::Command::compare)
    fill_compare(raw, config);
  if (config.command == config::Command::serve)
    fill_serve(raw, config);
  refuse_costs_for_strategies(config);
  fill_clock(raw, false, config);
  fill_audit(raw, false, config);
  if (raw.release_script)
    fill_release_script(raw, config);
}

void fill_http_kind(const RawOptions& raw, config::Config& config) {
  fill_http(raw, config);
  fill_tls(raw, true, config);
  fill_faults(raw, true, config);
  fill_workers(raw, config);
  fill_find_max(raw, config);
  fill_virtual_clock(raw, true, config);
  if (raw.command == config::Command::probe)
    fill_probe(raw, config);
  fill_clock(raw, true, config);
  fill_audit(raw, true, config);
}

}  // namespace rlcheck::cli
