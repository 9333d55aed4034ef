#include "app/redis_check.hpp"

#include <algorithm>
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
#include "app/shared_test.hpp"
#include "checks/checks.hpp"
#include "config/strategy_name.hpp"
#include "faults/fault_schedule.hpp"
#include "redis/async_client.hpp"
#include "redis/builtin_scripts.hpp"
#include "redis/strategy.hpp"

namespace rlcheck::app {
namespace {

using config::Strategy;

// A hash every build computes alike (std::hash need not): the session's key prefix.
uint32_t fnv1a32(std::string_view text) {
  uint32_t hash = 2166136261U;
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 16777619U;
  }
  return hash;
}

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

using Argv = std::vector<std::string_view>;

// One command on the session's control connection. A call that fails on I/O is made once more
// on a fresh connection (the server restarted, or CLIENT KILL dropped the connection); the
// error is the reconnection's when that fails too.
std::expected<redis::ReplyPtr, std::string> control_call(RedisSession& session, const Argv& argv,
                                                         config::Nanos timeout) {
  auto reply = session.target.control->call(argv);
  if (reply)
    return reply;
  const bool cluster = session.target.control->slot_map().has_value();
  auto fresh = redis::SyncClient::connect(session.target.endpoint, timeout);
  if (!fresh)
    return std::unexpected(fresh.error());
  if (cluster) {
    if (auto slots = fresh->discover_cluster(); !slots)
      return std::unexpected(slots.error());
  }
  session.target.control.emplace(std::move(*fresh));
  return session.target.control->call(argv);
}

// PTTL of each key right after its run (-1: no TTL, -2: gone); the error when Redis could not
// be reached.
std::expected<std::vector<checks::KeyTtl>, std::string> key_ttls(
    RedisSession& session, const std::vector<std::string>& keys, config::Nanos timeout) {
  std::vector<checks::KeyTtl> ttls;
  for (const std::string& key : keys) {
    auto reply = control_call(session, {"PTTL", key}, timeout);
    if (!reply)
      return std::unexpected(reply.error());
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

// Deletes `keys`; returns those it could not (from the first that failed: Redis is gone).
std::vector<std::string> delete_keys(RedisSession& session, const std::vector<std::string>& keys,
                                     config::Nanos timeout) {
  for (auto key = keys.begin(); key != keys.end(); ++key) {
    if (!control_call(session, {"DEL", *key}, timeout))
      return {key, keys.end()};
  }
  return {};
}

// Whether any request of the run reached Redis: one that never left, or found no connection,
// wrote no key.
bool reached_redis(engine::RecordView records) {
  return std::any_of(records.begin(), records.end(), [](const engine::RequestRecord& record) {
    return record.error != engine::ErrorKind::not_sent &&
           record.error != engine::ErrorKind::connection;
  });
}

// The keys a run's requests touched (none when no request reached Redis).
std::vector<std::string> keys_of_run(const redis::Strategy& limiter, engine::RecordView records) {
  return reached_redis(records) ? limiter.keys_touched(records) : std::vector<std::string>{};
}

// Reads the TTLs of a run's keys into `stats` (or why they could not be read).
void audit_key_ttls(RedisSession& session, const std::vector<std::string>& keys,
                    config::Nanos timeout, checks::RunStats& stats) {
  if (auto ttls = key_ttls(session, keys, timeout)) {
    stats.key_ttls = std::move(*ttls);
    stats.keys_without_ttl = keys_without_ttl(stats.key_ttls);
  } else {
    stats.keys_unread = ttls.error();
  }
}

// Deletes the keys of a run that rlcheck named itself (never a --key); those it could not
// delete join `left`. Redis that could not be read is not tried again: its keys are left.
void delete_own_keys(RedisSession& session, const config::Config& config,
                     const checks::RunStats& stats, const std::vector<std::string>& keys,
                     std::vector<std::string>& left) {
  if (config.redis.key)
    return;
  const auto kept =
      stats.keys_unread.empty() ? delete_keys(session, keys, config.load.timeout) : keys;
  left.insert(left.end(), kept.begin(), kept.end());
}

report::Topology topology_of(const redis::Topology& topology) {
  return {redis::topology_kind_name(topology.kind), topology.masters, topology.tls};
}

void add_transport_counts(report::TransportCounts& counts, const redis::TransportStats& stats) {
  counts.moved += stats.moved.load();
  counts.ask += stats.ask.load();
  counts.tryagain += stats.tryagain.load();
  counts.reconnects += stats.reconnects.load();
}

RunCounters counters_of(const redis::TransportStats& stats) {
  return {{"moved", stats.moved.load()},
          {"ask", stats.ask.load()},
          {"tryagain", stats.tryagain.load()},
          {"reconnects", stats.reconnects.load()},
          {"script_reloads", stats.script_reloads.load()}};
}

// Many hosts: what the other workers' connections met.
void add_shared_counts(report::Report& report, RunCounters& others) {
  report.transport.moved += others["moved"];
  report.transport.ask += others["ask"];
  report.transport.tryagain += others["tryagain"];
  report.transport.reconnects += others["reconnects"];
  report.script_reloads += others["script_reloads"];
}

}  // namespace

faults::FaultTarget fault_target_of(RedisSession& session, const config::Config& config) {
  faults::FaultTarget target;
  target.endpoint = session.target.endpoint;
  target.embedded = session.target.embedded.get();
  target.timeout = config.load.timeout;
  return target;
}

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
  // A failover needs a replica to take over: the private cluster gets one per master.
  for (const config::FaultSpec& fault : config.faults.faults) {
    if (fault.kind == config::FaultKind::failover)
      choice.embedded_replicas = 1;
  }
  const bool say = !config.output.hook && !config.output.quiet;
  auto target = redis::connect_target(choice, [say](const std::string& line) {
    if (say)
      std::cerr << "rlcheck: " << line << "\n";
  });
  if (!target)
    throw cannot_test(target.error());

  RedisSession session;
  session.target = std::move(*target);
  if (config.workers.distributed() && session.target.embedded) {
    throw usage_error(
        "--workers: no Redis was named, and each worker would test a private redis-server of "
        "its own; give every worker the same --redis (or REDIS_URL)");
  }
  if (!config.faults.faults.empty()) {
    const faults::FaultTarget fault_target = fault_target_of(session, config);
    if (auto refusal = faults::restart_refusal(fault_target, config.faults.faults))
      throw usage_error(*refusal);
    if (auto supported = faults::check_failover_support(fault_target, config.faults.faults);
        !supported)
      throw cannot_test(supported.error());
  }
  session.seed =
      config.seed ? *config.seed
                  : std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
  std::mt19937_64 rng(session.seed);
  session.instance_id = fmt::format("{:08x}", rng() & 0xffffffffULL);
  // Many hosts: every worker's requests count against the same keys, named by the session.
  if (config.workers.distributed())
    session.instance_id = fmt::format("{:08x}", fnv1a32(config.workers.session));
  return session;
}

report::Report check_redis_limiter(RedisSession& session, const config::Config& config,
                                   Strategy strategy, engine::RunObserver* observer,
                                   report::RecordsWriter* records, coord::Session* shared) {
  // Many hosts: worker 0 prepares, merges and judges; the others only send their share.
  const bool judging = shared == nullptr || shared->leader();
  const config::Nanos timeout = config.load.timeout;
  // A strategy compared after another finds Redis as that one left it: connected again, or gone.
  if (auto ping = control_call(session, {"PING"}, timeout); !ping)
    throw cannot_test(ping.error());
  const auto script = load_limiter_script(*session.target.control, config, strategy);
  ContractChoice contract = choose_contract(config, strategy, config.checks.limit);
  widen_for_clocks(contract, shared);
  const int64_t burst = contract.burst;
  const config::Rate refill = contract.refill;
  const std::string name(config::strategy_name(strategy));
  // Errors above --max-errors already decide the test: a run stops sending once it has them.
  // With --fault, errors are what the test provokes, and what follows them (recovery) is
  // measured: the run goes on to its end.
  config::LoadConfig load = config.load;
  if (config.faults.faults.empty())
    load.stop_after_errors = config.checks.max_errors;

  report::Report report;
  report.target.url = session.target.endpoint.display();
  report.target.embedded = session.target.embedded != nullptr;
  report.target.strategy = name;
  if (strategy == Strategy::script)
    report.target.script = config.redis.script_path;
  report.target.key = config.redis.key.value_or(fmt::format("rlcheck:{}:…", session.instance_id));
  report.params = configured_params(config, contract);
  report.params.pipeline = config.redis.pipeline;
  report.params.topology = topology_of(session.target.topology);

  ProgressLine progress(config);
  FitRecords fit(config);
  faults::FaultApplier fault_applier(fault_target_of(session, config));
  const auto params_of_run = [&](int run) {
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
    params.hash_tag_each_identity =
        !config.redis.key && session.target.control->slot_map().has_value();
    return params;
  };
  int runs_shipped = 0;  // many hosts: the runs this worker sent its share of
  for (int run = 1; run <= config.load.runs; ++run) {
    const redis::StrategyParams params = params_of_run(run);
    if (config.redis.key && config.redis.reset && judging) {
      std::vector<std::string> keys;
      for (const std::string& key : redis::IdentityKeys(params.key, params.identities).all()) {
        for (std::string& script_key : redis::script_keys(key, params.script_keys))
          keys.push_back(std::move(script_key));
      }
      // Before the first run this is set-up, and fails the test; before a later one Redis is
      // gone, and the run itself records it (no connection: every request an error).
      if (const auto left = delete_keys(session, keys, timeout); !left.empty() && run == 1) {
        throw cannot_test(
            fmt::format("--reset: cannot delete {} on {}", left.front(), report.target.url));
      }
    }

    const auto limiter = redis::make_strategy(params);
    redis::RunTarget target;
    target.endpoint = session.target.endpoint;
    target.strategy = limiter.get();
    target.seed = session.seed + static_cast<uint64_t>(run);
    target.pipeline = config.redis.pipeline;
    target.slots = session.target.control->slot_map();
    target.connect_timeout = config.load.timeout;
    target.source_addresses = config.load.source_addresses;
    redis::AsyncClientFactory factory(target);
    config::LoadConfig run_load = load;
    run_load.concurrency *= config.redis.pipeline;  // --pipeline D: D clients per connection
    // A failover acts on the master of the first identity's key.
    faults::FaultSchedule fault_schedule(
        judging ? config.faults.faults : std::vector<config::FaultSpec>{}, fault_applier,
        redis::IdentityKeys(params.key, params.identities, params.hash_tag_each_identity)
            .of_identity(0),
        observer);
    RunCounters others;  // worker 0: the other workers' transport counts of this run
    engine::RunResult result = execute_shared_run(
        shared, run, factory, run_load, &fault_schedule,
        progress.for_run(fmt::format("{} run {}/{}", name, run, config.load.runs)),
        [&target] { return counters_of(target.stats); }, others);
    std::vector<checks::FaultWindow> fault_windows = fault_schedule.finish();
    if (!judging) {
      if (shared_runs_end(result, *shared, runs_shipped))
        break;
      continue;
    }
    if (result.cancelled)
      break;  // a worker was lost before the run could start
    // Nothing measured yet: the test could not start. Once a run has, a later run without a
    // connection is reported with the others (its requests are errors).
    if (result.clients_ready == 0 && !result.interrupted && run == 1) {
      throw cannot_test(fmt::format("no connection to {} became ready: {}",
                                    session.target.endpoint.display(), result.connect_error));
    }

    if (records != nullptr) {
      records->write_run(strategy == Strategy::script ? config.redis.script_path : name, run,
                         result.records);
    }
    checks::RunStats stats =
        checks::summarize_run(run, result, contract.audit, std::move(fault_windows));
    std::vector<std::string> keys = keys_of_run(*limiter, result.records);
    audit_key_ttls(session, keys, timeout, stats);
    if (config.checks.verify_retry_after && run == config.load.runs && !result.interrupted) {
      if (!stats.keys_unread.empty()) {
        report.retry_verification.emplace();
        report.retry_verification->skip_reason =
            fmt::format("Redis was unreachable after the run: {}", stats.keys_unread);
      } else {
        std::vector<engine::RequestRecord> retried;
        report.retry_verification = verify_retry_after(
            factory, result, load, run, longest_retry_wait(config), announce_wait(config), retried);
        const auto more = limiter->keys_touched(retried);
        keys.insert(keys.end(), more.begin(), more.end());
      }
    }
    delete_own_keys(session, config, stats, keys, report.keys_left);
    fit.keep(result);
    report.script_reloads += target.stats.script_reloads.load();
    add_transport_counts(report.transport, target.stats);
    add_shared_counts(report, others);
    report.runs.push_back(std::move(stats));
    if (result.interrupted ||
        (report.retry_verification && report.retry_verification->interrupted)) {
      report.interrupted = true;
      break;
    }
    if (shared != nullptr && shared->lost_any())
      break;  // the runs after a lost worker could not be shared as the test asks
  }

  if (!judging) {
    // Worker 0 reports for everyone; should it be lost, the first worker to take its place
    // judges what was shipped (no faults were applied after it was lost, none are measured).
    RunCounters counters;
    const bool stands_in = judge_in_place_of_lost_leader(
        shared, runs_shipped,
        [&](int run, engine::RunResult merged) {
          const auto limiter = redis::make_strategy(params_of_run(run));
          checks::RunStats stats = checks::summarize_run(run, merged, contract.audit, {});
          const std::vector<std::string> keys = keys_of_run(*limiter, merged.records);
          audit_key_ttls(session, keys, timeout, stats);
          delete_own_keys(session, config, stats, keys, report.keys_left);
          report.runs.push_back(std::move(stats));
        },
        counters);
    if (!stands_in)
      return {};
    add_shared_counts(report, counters);
  }
  const checks::CheckParams judged = check_params(config, config.checks.limit, contract);
  judge(report, judged);
  fit.explain(report, judged, contract);
  describe_workers(report, shared);
  return report;
}

}  // namespace rlcheck::app
