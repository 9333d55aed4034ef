#include "app/redis_check.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "app/contract_choice.hpp"
#include "app/contract_fit_note.hpp"
#include "app/exit_code.hpp"
#include "app/judgement.hpp"
#include "app/progress.hpp"
#include "app/retry_verification.hpp"
#include "checks/checks.hpp"
#include "config/strategy_name.hpp"
#include "redis/async_client.hpp"
#include "redis/builtin_scripts.hpp"
#include "redis/strategy.hpp"

namespace rlcheck::app {
namespace {

using config::Strategy;

}  // namespace

std::optional<redis::LoadedScript> load_limiter_script(redis::SyncClient& control,
                                                       const config::Config& config,
                                                       Strategy strategy) {
  redis::LoadedScript script;
  if (strategy == Strategy::script) {
    std::ifstream in(config.redis.script_path, std::ios::binary);
    if (!in)
      throw usage_error(fmt::format("--script: cannot read {}", config.redis.script_path));
    std::stringstream body;
    body << in.rdbuf();
    script.name = config.redis.script_path;
    script.source = body.str();
  } else {
    const redis::BuiltinScript builtin = redis::builtin_script(strategy);
    if (builtin.source.empty())
      return std::nullopt;
    script.name = std::string(builtin.file_name);
    script.source = std::string(builtin.source);
  }
  auto reply = control.call({"SCRIPT", "LOAD", script.source});
  if (!reply)
    throw cannot_test(reply.error());
  if ((*reply)->type != REDIS_REPLY_STRING) {
    throw cannot_test(fmt::format("script {} did not load: {}", script.name,
                                  redis::describe_reply(reply->get())));
  }
  script.sha.assign((*reply)->str, (*reply)->len);
  return script;
}

namespace {

// PTTL of each key right after its run (-1: no TTL, -2: gone).
std::vector<checks::KeyTtl> key_ttls(redis::SyncClient& control,
                                     const std::vector<std::string>& keys) {
  std::vector<checks::KeyTtl> ttls;
  for (const std::string& key : keys) {
    auto reply = control.call({"PTTL", key});
    if (!reply)
      throw cannot_test(reply.error());
    if ((*reply)->type == REDIS_REPLY_INTEGER)
      ttls.push_back({key, (*reply)->integer});
  }
  return ttls;
}

std::vector<std::string> keys_without_ttl(const std::vector<checks::KeyTtl>& ttls) {
  std::vector<std::string> missing;
  for (const checks::KeyTtl& key : ttls) {
    if (key.ttl_ms == -1)
      missing.push_back(key.key);
  }
  return missing;
}

void delete_keys(redis::SyncClient& control, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    auto reply = control.call({"DEL", key});
    if (!reply)
      throw cannot_test(reply.error());
  }
}

}  // namespace

RedisSession open_redis_session(const config::Config& config) {
  redis::TargetChoice choice;
  choice.url = config.redis.url;
  if (const char* env = std::getenv("REDIS_URL"); env != nullptr && *env != '\0') {
    choice.env_url = env;
  }
  choice.timeout = config.load.timeout;
  choice.tls = config.tls;
  choice.require_cluster = config.redis.require_cluster;
  choice.embedded_cluster = config.redis.embedded_cluster;
  const bool say = !config.output.hook && !config.output.quiet;
  auto target = redis::connect_target(choice, [say](const std::string& line) {
    if (say)
      std::cerr << "rlcheck: " << line << "\n";
  });
  if (!target)
    throw cannot_test(target.error());

  RedisSession session;
  session.target = std::move(*target);
  session.seed =
      config.seed ? *config.seed
                  : std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
  std::mt19937_64 rng(session.seed);
  session.instance_id = fmt::format("{:08x}", rng() & 0xffffffffULL);
  return session;
}

report::Report check_redis_limiter(RedisSession& session, const config::Config& config,
                                   Strategy strategy, engine::RunObserver* observer,
                                   report::RecordsWriter* records) {
  redis::SyncClient& control = *session.target.control;
  const auto script = load_limiter_script(control, config, strategy);
  const ContractChoice contract = choose_contract(config, strategy, config.checks.limit);
  const int64_t burst = contract.burst;
  const config::Rate refill = contract.refill;
  const std::string name(config::strategy_name(strategy));

  report::Report report;
  report.target.url = session.target.endpoint.display();
  report.target.embedded = session.target.embedded != nullptr;
  report.target.strategy = name;
  if (strategy == Strategy::script)
    report.target.script = config.redis.script_path;
  report.target.key = config.redis.key.value_or(fmt::format("rlcheck:{}:…", session.instance_id));
  report.params = configured_params(config, contract);

  ProgressLine progress(config);
  FitRecords fit(config);
  for (int run = 1; run <= config.load.runs; ++run) {
    redis::StrategyParams params;
    params.kind = strategy;
    params.key =
        config.redis.key.value_or(fmt::format("rlcheck:{}:{}:{}", session.instance_id, name, run));
    params.identities = config.load.identities;
    params.limit = config.checks.limit;
    params.window_ms = config::to_milliseconds(config.checks.window);
    params.burst = burst;
    params.refill = refill;
    params.run = run;
    params.instance_id = session.instance_id;
    params.script = script ? &*script : nullptr;
    params.arg_templates = config.redis.script_args;
    params.reply = config.redis.reply;
    params.script_keys = config.redis.script_keys;
    if (config.redis.key && config.redis.reset) {
      for (const std::string& key : redis::IdentityKeys(params.key, params.identities).all())
        delete_keys(control, redis::script_keys(key, params.script_keys));
    }

    const auto limiter = redis::make_strategy(params);
    redis::RunTarget target;
    target.endpoint = session.target.endpoint;
    target.login = redis::login_commands(session.target.endpoint);
    target.strategy = limiter.get();
    target.seed = session.seed + static_cast<uint64_t>(run);
    target.pipeline = config.redis.pipeline;
    target.slots = control.slot_map();
    target.connect_timeout = config.load.timeout;
    redis::AsyncClientFactory factory(target);
    config::LoadConfig load = config.load;
    load.concurrency *= config.redis.pipeline;  // --pipeline D: D clients share a connection
    engine::RunResult result = engine::execute_run(
        factory, load, observer,
        progress.for_run(fmt::format("{} run {}/{}", name, run, config.load.runs)));
    if (result.clients_ready == 0 && !result.interrupted) {
      throw cannot_test(fmt::format("no connection to {} became ready: {}",
                                    session.target.endpoint.display(), result.connect_error));
    }

    if (records != nullptr) {
      records->write_run(strategy == Strategy::script ? config.redis.script_path : name, run,
                         result.records);
    }
    checks::RunStats stats = checks::summarize_run(run, result, contract.audit);
    std::vector<std::string> keys = limiter->keys_touched(result.records);
    stats.key_ttls = key_ttls(control, keys);
    stats.keys_without_ttl = keys_without_ttl(stats.key_ttls);
    if (config.checks.verify_retry_after && run == config.load.runs && !result.interrupted) {
      std::vector<engine::RequestRecord> retried;
      report.retry_verification =
          verify_retry_after(factory, result, config.load, run, longest_retry_wait(config),
                             announce_wait(config), retried);
      const auto more = limiter->keys_touched(retried);
      keys.insert(keys.end(), more.begin(), more.end());
    }
    if (!config.redis.key)
      delete_keys(control, keys);  // only keys this run created
    fit.keep(result);
    report.script_reloads += target.stats.script_reloads.load();
    report.runs.push_back(std::move(stats));
    if (result.interrupted ||
        (report.retry_verification && report.retry_verification->interrupted)) {
      report.interrupted = true;
      break;
    }
  }

  const checks::CheckParams judged = check_params(config, config.checks.limit, contract);
  judge(report, judged);
  fit.explain(report, judged, contract);
  return report;
}

}  // namespace rlcheck::app
