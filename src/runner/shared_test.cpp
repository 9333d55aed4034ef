#include "runner/shared_test.hpp"

#include <cmath>
#include <iostream>

#include <unistd.h>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "config/clock_skew.hpp"
#include "config/duration.hpp"
#include "config/identity_dist.hpp"
#include "config/rate.hpp"
#include "config/stages.hpp"
#include "config/strategy_name.hpp"
#include "redis/endpoint.hpp"

namespace rlcheck::runner {
namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0)
    return "unknown";
  return name;
}

}  // namespace

std::string test_fingerprint(const config::Config& config, const TargetLines& target) {
  const config::LoadConfig& load = config.load;
  std::string lines;
  const auto line = [&lines](std::string_view name, const std::string& value) {
    lines += fmt::format("{}={}\n", name, value);
  };
  line("command", config.kind);
  for (const auto& [name, value] : target)
    line(name, value);
  line("workers", std::to_string(config.workers.count));
  line("requests", std::to_string(load.requests));
  line("concurrency", std::to_string(load.concurrency));
  line("runs", std::to_string(load.runs));
  line("identities", std::to_string(load.identities));
  // Every worker draws the same identity for the same request only from the same seed.
  line("identity_dist", config::format_identity_dist(load.identity_dist));
  if (!load.identity_dist.uniform())
    line("identity_seed", std::to_string(load.identity_seed));
  line("rate", load.rate ? config::format_rate(*load.rate) : "");
  line("interval", config::format_duration(load.interval));
  line("stages", config::format_stages(load.stages));
  line("arrivals", load.arrivals == config::Arrivals::poisson ? "poisson" : "uniform");
  // Poisson arrivals are drawn from it: every worker must plan the same instants.
  line("seed", config.seed ? std::to_string(*config.seed) : "");
  line("limit", std::to_string(config.checks.limit));
  line("window", config::format_duration(config.checks.window));
  line("contract", config.checks.contract.value_or(""));
  line("anchor", config.checks.anchor.value_or(""));
  // Each worker's connections read its own offset: every worker must know the same list.
  line("clock_skew", config::format_clock_skews(config.load.clock_skews));
  return lines;
}

std::unique_ptr<coord::Session> join_session(const config::Config& config,
                                             const TargetLines& target) {
  if (!config.workers.distributed())
    return nullptr;
  auto endpoint = redis::parse_endpoint(config.workers.coordinator);
  if (!endpoint)
    throw base::usage_error(fmt::format("--coordinator: {}", endpoint.error()));
  if (endpoint->tls)
    endpoint->tls_options = config.tls;
  coord::SessionOptions options;
  options.workers = config.workers.count;
  options.index = config.workers.index;
  options.coordinator = std::move(*endpoint);
  options.id = config.workers.session;
  options.join_timeout = config.workers.join_timeout;
  options.timeout = config.load.timeout;
  options.host = host_name();
  options.fingerprint = test_fingerprint(config, target);
  const bool say = !config.output.hook && !config.output.quiet;
  auto session = coord::Session::join(options, [say](const std::string& line) {
    if (say)
      std::cerr << "rlcheck: " << line << "\n";
  });
  if (!session) {
    if (session.error().usage)
      throw base::usage_error(session.error().message);
    throw base::cannot_test(session.error().message);
  }
  return std::move(*session);
}

engine::RunResult execute_shared_run(coord::Session* session, int run,
                                     engine::ClientFactory& factory, config::LoadConfig load,
                                     const engine::RunHooks& hooks,
                                     const std::function<RunCounters()>& own_counters,
                                     RunCounters& others) {
  if (session == nullptr)
    return engine::execute_run(factory, load, hooks);
  const auto workers = static_cast<uint64_t>(session->workers());
  const auto index = static_cast<uint64_t>(session->index());
  load.share_count = workers;
  load.share_index = index;
  // -p is the whole test's: each worker opens its share of the connections.
  load.concurrency = static_cast<int>(static_cast<uint64_t>(load.concurrency) / workers +
                                      (index < static_cast<uint64_t>(load.concurrency) % workers));
  load.abandon = session->abandon_flag();
  load.start_gate = [session, run, &load] { return session->agree_start(run, load); };
  engine::RunResult result = engine::execute_run(factory, load, hooks);
  if (result.cancelled)
    return result;
  // Worker 0 ships too: should it be lost, the worker that takes its place merges its runs.
  const RunCounters counters = own_counters ? own_counters() : RunCounters{};
  if (auto shipped = session->ship(run, result, counters); !shipped)
    throw base::cannot_test(
        fmt::format("--coordinator: cannot ship run {}: {}", run, shipped.error()));
  if (!session->leader())
    return result;
  // Its own counters are in the factory's stats already.
  auto merged = session->merge_shipped(run, others, false);
  if (!merged)
    throw base::cannot_test(
        fmt::format("--coordinator: cannot merge run {}: {}", run, merged.error()));
  // Every worker planned the same schedule (the same load and seed): the records' due times.
  merged->schedule = result.schedule;
  return std::move(*merged);
}

bool shared_runs_end(const engine::RunResult& result, const coord::Session& session,
                     int& runs_shipped) {
  if (result.cancelled)
    return true;
  ++runs_shipped;
  return result.interrupted || session.lost_any();
}

bool judge_in_place_of_lost_leader(coord::Session* session, int runs_shipped,
                                   const std::function<void(int, engine::RunResult)>& judge_run,
                                   RunCounters& counters) {
  if (session == nullptr || !session->take_over_from_lost_leader())
    return false;
  for (int run = 1; run <= runs_shipped; ++run) {
    auto merged = session->merge_shipped(run, counters, true);
    if (!merged)
      throw base::cannot_test(
          fmt::format("--coordinator: cannot merge run {}: {}", run, merged.error()));
    judge_run(run, std::move(*merged));
  }
  return true;
}

}  // namespace rlcheck::runner
