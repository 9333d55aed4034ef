#include "targets/redis/redis_target.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "config/strategy_name.hpp"
#include "engine/placeholder_template.hpp"
#include "engine/request_clock.hpp"
#include "judging/contract_choice.hpp"
#include "judging/judgement.hpp"

namespace rlcheck::targets {
namespace {

using config::Strategy;

// Whether any request of the run reached Redis: one that never left, or found no connection,
// wrote no key.
bool reached_redis(engine::RecordView records) {
  return std::any_of(records.begin(), records.end(), [](const engine::RequestRecord& record) {
    return record.error != engine::ErrorKind::not_sent &&
           record.error != engine::ErrorKind::connection;
  });
}

runner::RunCounters counters_of(const redis::TransportStats& stats) {
  return {{"moved", stats.moved.load()},
          {"ask", stats.ask.load()},
          {"tryagain", stats.tryagain.load()},
          {"reconnects", stats.reconnects.load()},
          {"script_reloads", stats.script_reloads.load()}};
}

// fixed-window's key is named by the client's clock; naive, incr-expire and fixed-first-hit
// read no clock (empty).
std::string time_source_name(Strategy strategy, config::TimeSource source) {
  const std::optional<config::TimeSource> read = config::clock_read(strategy, source);
  if (!read)
    return "";
  return *read == config::TimeSource::client ? "client" : "redis";
}

std::string target_name(Strategy strategy, config::TimeSource source) {
  std::string name(config::strategy_name(strategy));
  if (config::time_source_matters(strategy) && source == config::TimeSource::client)
    name += "@client";
  return name;
}

}  // namespace

RedisTarget::RedisTarget(RedisSession& session, const config::Config& config, Strategy strategy,
                         config::TimeSource time_source)
    : session_(session),
      config_(config),
      strategy_(strategy),
      time_source_(time_source),
      name_(target_name(strategy, time_source)),
      bucket_(judging::choose_contract(config, strategy, config.checks.limit)) {}

void RedisTarget::prepare_test() {
  // A strategy compared after another finds Redis as that one left it: connected again, or
  // gone.
  if (auto ping = control_call(session_, {"PING"}, config_.load.timeout); !ping)
    throw base::cannot_test(ping.error());
  script_ = load_limiter_script(*session_.target.control, config_, strategy_);
  if (!config_.redis.release_script_path.empty()) {
    release_script_ = load_script_file(*session_.target.control, config_.redis.release_script_path,
                                       "--release-script");
  }
}

std::string RedisTarget::address() const {
  return session_.target.endpoint.display();
}

void RedisTarget::describe(report::Report& report) const {
  report.target.url = session_.target.endpoint.display();
  report.target.embedded = session_.target.embedded != nullptr;
  report.target.strategy = config::strategy_name(strategy_);
  if (config_.redis.time_source_given)
    report.target.time_source = time_source_name(strategy_, time_source_);
  if (strategy_ == Strategy::script)
    report.target.script = config_.redis.script_path;
  if (release_script_)
    report.releases = releases_;
  report.target.key = config_.redis.key.value_or(fmt::format("rlcheck:{}:…", session_.instance_id));
  report.params.pipeline = config_.redis.pipeline;
  report.params.clock_skew_read =
      strategy_ == Strategy::script
          ? engine::any_reads_clock(config_.redis.script_args,
                                    engine::PlaceholderTemplate::Unknown::error)
          : config::clock_read(strategy_, time_source_) == config::TimeSource::client;
  const redis::Topology& topology = session_.target.topology;
  report.params.topology = {redis::topology_kind_name(topology.kind), topology.masters,
                            topology.tls};
  report.transport.emplace();
  report::describe_redis_limiter(report.target);
}

faults::FaultedRedis RedisTarget::faulted_redis() {
  faults::FaultedRedis target;
  target.endpoint = session_.target.endpoint;
  target.embedded = session_.target.embedded.get();
  target.timeout = config_.load.timeout;
  return target;
}

std::string RedisTarget::run_label(int run, int runs) const {
  return fmt::format("{} run {}/{}", name_, run, runs);
}

std::string RedisTarget::records_name() const {
  return strategy_ == Strategy::script ? config_.redis.script_path : name_;
}

runner::StateChoice RedisTarget::run_state(int run) const {
  return {run, session_.seed + static_cast<uint64_t>(run), name_, false};
}

redis::StrategyParams RedisTarget::params_of(const runner::StateChoice& state) const {
  redis::StrategyParams params;
  params.kind = strategy_;
  params.limit = config_.checks.limit;
  params.window_ms = config::to_milliseconds(config_.checks.window);
  params.burst = bucket_.burst;
  params.refill = bucket_.refill;
  params.run = state.state;
  params.instance_id = session_.instance_id;
  params.script = script_ ? &*script_ : nullptr;
  params.arg_templates = config_.redis.script_args;
  params.reply = config_.redis.reply;
  params.script_keys = config_.redis.script_keys;
  params.time_source = time_source_;
  const std::string fresh_key =
      fmt::format("rlcheck:{}:{}:{}", session_.instance_id, state.label, state.state);
  if (state.fresh) {
    params.key = fresh_key;
    return params;
  }
  params.key = config_.redis.key.value_or(fresh_key);
  params.identities = config_.load.identities;
  params.group_size = config_.load.group_size;
  params.weighted = config_.load.costs.weighted();
  params.hash_tag_each_identity =
      !config_.redis.key && session_.target.control->slot_map().has_value();
  return params;
}

std::vector<std::string> RedisTarget::delete_keys(const std::vector<std::string>& keys) {
  for (auto key = keys.begin(); key != keys.end(); ++key) {
    if (!control_call(session_, {"DEL", *key}, config_.load.timeout))
      return {key, keys.end()};
  }
  return {};
}

bool RedisTarget::prepare_run(int run, bool leader) {
  if (!config_.redis.key || !config_.redis.reset || !leader)
    return true;
  const redis::StrategyParams params = params_of(run_state(run));
  std::vector<std::string> keys;
  for (const std::string& key : redis::IdentityKeys(params.key, params.identities).all()) {
    for (std::string& script_key : redis::script_keys(key, params.script_keys))
      keys.push_back(std::move(script_key));
  }
  // Before the first run this is set-up, and fails the test; before a later one Redis is
  // gone, and the run itself records it (no connection: every request an error).
  if (const auto left = delete_keys(keys); !left.empty() && run == 1) {
    throw base::cannot_test(
        fmt::format("--reset: cannot delete {} on {}", left.front(), address()));
  }
  return true;
}

std::optional<engine::ClockReading> RedisTarget::read_limiter_clock() {
  if (!session_.target.control)
    return std::nullopt;
  const int64_t before = engine::steady_now_ns();
  auto reply = session_.target.control->call({"TIME"});
  const int64_t after = engine::steady_now_ns();
  // Not readable (an ACL without TIME, Redis gone after a fault): nothing to compare.
  const auto time_ns = reply ? redis::time_reply_ns(reply->get()) : std::nullopt;
  if (!time_ns)
    return std::nullopt;
  constexpr int64_t k_time_resolution_ns = 1000;  // TIME counts microseconds
  return engine::ClockReading::between(*time_ns, before, after, k_time_resolution_ns);
}

runner::RunClients RedisTarget::clients(const runner::StateChoice& state,
                                        const config::LoadConfig& load) {
  const redis::StrategyParams params = params_of(state);
  factory_.reset();
  limiter_ = redis::make_strategy(params);
  run_target_ = std::make_unique<redis::RunTarget>();
  redis::RunTarget& target = *run_target_;
  target.endpoint = session_.target.endpoint;
  target.strategy = limiter_.get();
  target.seed = state.seed;
  target.pipeline = config_.redis.pipeline;
  target.slots = session_.target.control->slot_map();
  target.connect_timeout = load.timeout;
  target.source_addresses = load.source_addresses;
  if (release_script_) {
    redis::StrategyParams release = params;
    release.script = &*release_script_;
    release_ = redis::make_strategy(release);
    target.release = release_.get();
    target.hold = config_.checks.hold.value_or(config::Nanos{0});
    target.release_timeout = load.timeout;
  }
  factory_ = std::make_unique<redis::AsyncClientFactory>(target);

  runner::RunClients clients;
  clients.factory = factory_.get();
  clients.load = load;
  clients.load.concurrency *= config_.redis.pipeline;  // --pipeline D: D clients a connection
  clients.load.clients_per_connection = config_.redis.pipeline;
  // A failover acts on the master of the first identity's key.
  clients.failover_key =
      redis::IdentityKeys(params.key, params.identities, params.hash_tag_each_identity)
          .of_identity(0);
  clients.counters = [&target] { return counters_of(target.stats); };
  if (release_script_) {
    clients.finish = [this, &target](engine::RunResult& result) {
      for (const redis::LeaseEnd& end : target.leases.take_ends()) {
        result.lease_ends.emplace_back(
            end.seq, end.released ? std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        *end.released - result.start)
                                        .count()
                                  : INT64_MAX);
      }
      releases_.released += target.leases.released();
      releases_.failed += target.leases.failed();
      if (releases_.first_error.empty())
        releases_.first_error = target.leases.first_error();
    };
  }
  return clients;
}

std::vector<std::string> RedisTarget::keys_touched(const runner::StateChoice& state,
                                                   engine::RecordView records) {
  // One that never left, or found no connection, wrote no key.
  if (!reached_redis(records))
    return {};
  return redis::make_strategy(params_of(state))->keys_touched(records);
}

runner::StateAudit RedisTarget::audit_state(int run, engine::RecordView records) {
  runner::StateAudit audit;
  audit.keys = keys_touched(run_state(run), records);
  // PTTL of each key right after its run (-1: no TTL, -2: gone).
  for (const std::string& key : audit.keys) {
    auto reply = control_call(session_, {"PTTL", key}, config_.load.timeout);
    if (!reply) {
      audit.key_ttls.clear();
      audit.unread = reply.error();
      break;
    }
    if ((*reply)->type == REDIS_REPLY_INTEGER)
      audit.key_ttls.push_back({key, (*reply)->integer});
  }
  // What the key that lives longest holds, for key-ttl's word on a TTL longer than needed. A
  // server that refuses MEMORY (an ACL user without it, another node's slot) leaves it unknown.
  const auto longest = std::ranges::max_element(
      audit.key_ttls,
      [](const checks::KeyTtl& a, const checks::KeyTtl& b) { return a.ttl_ms < b.ttl_ms; });
  if (longest != audit.key_ttls.end() && longest->ttl_ms > 0) {
    auto reply = control_call(session_, {"MEMORY", "USAGE", longest->key}, config_.load.timeout);
    if (reply && (*reply)->type == REDIS_REPLY_INTEGER)
      longest->memory_bytes = (*reply)->integer;
  }
  return audit;
}

void RedisTarget::clean_up(int run, const runner::StateAudit& audit,
                           const std::vector<engine::RequestRecord>& retried,
                           std::vector<std::string>& left) {
  // Only the keys rlcheck named itself, never a --key.
  if (config_.redis.key)
    return;
  std::vector<std::string> keys = audit.keys;
  if (!retried.empty()) {
    const auto more = redis::make_strategy(params_of(run_state(run)))->keys_touched(retried);
    keys.insert(keys.end(), more.begin(), more.end());
  }
  // Redis that could not be read is not tried again: its keys are left.
  const auto kept = audit.unread.empty() ? delete_keys(keys) : keys;
  left.insert(left.end(), kept.begin(), kept.end());
}

std::vector<runner::Judging> RedisTarget::judgings(const std::vector<engine::RunResult>&, bool) {
  runner::Judging judging;
  judging.config = config_;
  judging.strategy = strategy_;
  if (config_.redis.key && !config_.redis.reset) {
    judging.state_note =
        fmt::format("--key {} is yours and was not reset: --reset deletes it before each run",
                    *config_.redis.key);
  }
  return {judging};
}

std::chrono::milliseconds RedisTarget::longest_retry_wait(
    const std::vector<engine::RunResult>&) const {
  return judging::longest_retry_wait(config_);
}

}  // namespace rlcheck::targets
