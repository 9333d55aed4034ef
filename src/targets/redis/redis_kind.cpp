#include "targets/redis/redis_kind.hpp"

#include <deque>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/option_groups.hpp"
#include "config/strategy_name.hpp"
#include "faults/fault_applier.hpp"
#include "redis/endpoint.hpp"
#include "targets/redis/redis_probe_sender.hpp"
#include "targets/redis/redis_target.hpp"

namespace rlcheck::targets {
namespace {

void add_redis_command_options(CLI::App& command, cli::RawOptions& raw) {
  cli::add_worker_options(&command, raw);
  cli::add_redis_options(&command, raw);
  cli::optional_option(&command, "--release-script", raw.release_script,
                       "a semaphore's release (FILE.lua), called --hold after each admission with "
                       "the KEYS and ARGV --script got for it; needs --contract concurrency:C and "
                       "--hold");
  cli::add_hint_resolution_option(&command, raw);
  cli::add_redis_connection_options(&command, raw);
}

// --time-source: each source a strategy can read; one whose clock the flag does not change
// (fixed-window: the client's, always; those that read no clock) runs once.
std::vector<config::TimeSource> time_sources_of(config::Strategy strategy,
                                                const config::RedisConfig& redis) {
  if (config::time_source_matters(strategy))
    return redis.time_sources;
  return {
      config::clock_read(strategy, config::TimeSource::redis).value_or(config::TimeSource::redis)};
}

// What the targets of one command line share: the Redis session, and compare --script's
// configurations (each script's path and arguments in place of --script's).
struct RedisShared {
  std::optional<RedisSession> session;
  std::deque<config::Config> script_configs;
};

TargetPlan plan_redis(const config::Config& config) {
  TargetPlan plan;
  auto shared = std::make_shared<RedisShared>();
  plan.common = shared;
  shared->session = open_redis_session(config);
  RedisSession* session = &*shared->session;
  const bool compare = config.command == config::Command::compare;
  plan.variants = compare;
  const auto strategies =
      compare ? config.compare_strategies : std::vector<config::Strategy>{config.redis.strategy};
  for (const config::Strategy strategy : strategies) {
    for (const config::TimeSource source : time_sources_of(strategy, config.redis)) {
      plan.targets.push_back({[&config, session, strategy, source] {
                                return std::make_unique<RedisTarget>(*session, config, strategy,
                                                                     source);
                              },
                              &config});
    }
  }
  for (const config::CompareScript& script : config.compare_scripts) {
    config::Config& own = shared->script_configs.emplace_back(config);
    own.redis.strategy = config::Strategy::script;
    own.redis.script_path = script.path;
    own.redis.script_args = script.args;
    plan.targets.push_back({[&own, session] {
                              return std::make_unique<RedisTarget>(*session, own,
                                                                   config::Strategy::script);
                            },
                            &own});
  }
  return plan;
}

void check_shared_redis(const config::Config& config, const runner::EnvLookup& env) {
  const char* env_url = env("REDIS_URL");
  const bool env_named = env_url != nullptr && *env_url != '\0';
  // Neither named: 127.0.0.1:6379 or a private server, each worker's own.
  if (config.redis.url ? *config.redis.url == config::k_embedded_url : !env_named)
    throw base::usage_error(std::string(runner::k_private_redis_per_worker));
  if (config.redis.strategy == config::Strategy::script &&
      !std::ifstream(config.redis.script_path, std::ios::binary)) {
    throw base::usage_error(fmt::format("--script: cannot read {}", config.redis.script_path));
  }
  // restart@ with --redis is refused by the command line already.
  if (!config.redis.url) {
    faults::FaultedRedis target;
    if (auto endpoint = redis::parse_endpoint(env_url); endpoint) {
      target.endpoint = std::move(*endpoint);
      if (auto refusal = faults::restart_refusal(target, config.faults.faults))
        throw base::usage_error(*refusal);
    }
  }
}

TargetLines redis_lines(const config::Config& config) {
  return {
      {"strategy", std::string(config::strategy_name(config.redis.strategy))},
      {"script", config.redis.script_path},
      {"key", config.redis.key.value_or("")},
      {"time_source",
       config.redis.time_sources.front() == config::TimeSource::client ? "client" : "redis"},
  };
}

RunPacing redis_pacing(const config::Config& config) {
  RunPacing pacing;
  if (config.command == config::Command::compare)
    pacing.targets =
        config.compare_strategies.size() * std::max<size_t>(config.redis.time_sources.size(), 1) +
        config.compare_scripts.size();
  return pacing;
}

}  // namespace

TargetKind redis_kind() {
  TargetKind kind;
  kind.command.name = "redis";
  kind.command.summary = "drive a Redis limiter directly";
  kind.command.state_in_redis = true;
  kind.command.add_options = add_redis_command_options;
  kind.command.fill = cli::fill_redis_kind;
  kind.plan = plan_redis;
  kind.probe_sender = make_redis_probe_sender;
  kind.check_shared = check_shared_redis;
  kind.fingerprint = redis_lines;
  kind.pacing = redis_pacing;
  return kind;
}

}  // namespace rlcheck::targets
