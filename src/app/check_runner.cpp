#include "app/check_runner.hpp"

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "config/strategy_name.hpp"
#include "faults/fault_schedule.hpp"
#include "runner/http_target.hpp"
#include "runner/redis_target.hpp"
#include "runner/run_loop.hpp"
#include "runner/run_preflight.hpp"

namespace rlcheck::app {
namespace {

// --time-source: each source a strategy can read; one whose clock the flag does not change
// (fixed-window: the client's, always; those that read no clock) runs once.
std::vector<config::TimeSource> time_sources_of(config::Strategy strategy,
                                                const config::RedisConfig& redis) {
  if (config::time_source_matters(strategy))
    return redis.time_sources;
  return {
      config::clock_read(strategy, config::TimeSource::redis).value_or(config::TimeSource::redis)};
}

}  // namespace

std::vector<report::Report> run_checks(const config::Config& config, report::RecordsWriter* records,
                                       std::string* cut_short, coord::Session* shared,
                                       runner::Monitor* monitor) {
  runner::ensure_descriptors(runner::descriptors_needed(runner::connections_needed(config)),
                             fmt::format("-p {}", config.load.concurrency));
  runner::check_source_addresses(config.load.source_addresses);
  // Each target the command names, made when its turn comes (the next compared strategy finds
  // Redis as the one before left it), with the configuration it runs under (a compared
  // script's own).
  struct PlannedTarget {
    std::function<std::unique_ptr<runner::Target>()> make;
    const config::Config* config;
  };
  std::vector<PlannedTarget> targets;
  std::optional<runner::RedisSession> session;
  // compare --script: each script's configuration, its path and arguments in place of --script's.
  std::deque<config::Config> script_configs;
  if (config.command == config::Command::http || config.compare_urls) {
    for (const std::string& url : config.http.urls) {
      targets.push_back({[&config, url] {
                           const uint64_t seed =
                               config.seed ? *config.seed : std::random_device{}();
                           return std::make_unique<runner::HttpEndpoint>(config, url, seed);
                         },
                         &config});
    }
  } else {
    session = runner::open_redis_session(config);
    const auto strategies = config.command == config::Command::compare
                                ? config.compare_strategies
                                : std::vector<config::Strategy>{config.redis.strategy};
    for (const config::Strategy strategy : strategies) {
      for (const config::TimeSource source : time_sources_of(strategy, config.redis)) {
        targets.push_back({[&config, &session, strategy, source] {
                             return std::make_unique<runner::RedisTarget>(*session, config,
                                                                          strategy, source);
                           },
                           &config});
      }
    }
    for (const config::CompareScript& script : config.compare_scripts) {
      config::Config& own = script_configs.emplace_back(config);
      own.redis.strategy = config::Strategy::script;
      own.redis.script_path = script.path;
      own.redis.script_args = script.args;
      targets.push_back({[&own, &session] {
                           return std::make_unique<runner::RedisTarget>(*session, own,
                                                                        config::Strategy::script);
                         },
                         &own});
    }
  }
  // Compared strategies are never shared by many hosts.
  const bool strategies_compared =
      config.command == config::Command::compare && !config.compare_urls;
  // One monitor for every target: compare's count into the same metrics.
  std::optional<runner::Monitor> own_monitor;
  if (monitor == nullptr)
    monitor = &own_monitor.emplace(config);
  const runner::RunOutputs outputs{nullptr, records, strategies_compared ? nullptr : shared,
                                   monitor};
  std::vector<report::Report> reports;
  for (const PlannedTarget& planned : targets) {
    try {
      const std::unique_ptr<runner::Target> target = planned.make();
      reports.push_back(runner::run_test(*target, *planned.config, outputs));
    } catch (const base::FatalError& error) {
      // Before anything was measured it is the test's set-up that failed; after, the reports
      // so far still stand.
      if (reports.empty() || error.code() != base::ExitCode::cannot_test)
        throw;
      if (cut_short != nullptr)
        *cut_short = error.what();
      break;
    }
    if (reports.back().interrupted)
      break;
  }
  return reports;
}

std::optional<std::string> fault_failure(const report::Report& report) {
  for (const checks::RunStats& run : report.runs) {
    for (const checks::FaultWindow& fault : run.faults) {
      if (faults::failed_to_apply(fault)) {
        return fmt::format("--fault {} could not be applied in run {}: {}", fault.spec, run.run,
                           fault.error);
      }
    }
  }
  return std::nullopt;
}

base::ExitCode exit_code_of(const report::Report& report, bool hook) {
  if (report.interrupted)
    return base::ExitCode::interrupted;
  base::ExitCode code = base::ExitCode::ok;
  if (report.verdict == checks::Verdict::error || fault_failure(report) ||
      (report.workers && !report.workers->lost.empty()))
    code = base::ExitCode::cannot_test;
  if (report.verdict == checks::Verdict::fail)
    code = base::ExitCode::check_failed;
  if (hook && code != base::ExitCode::ok)
    code = base::ExitCode::hook_blocked;
  return code;
}

base::ExitCode overall_exit_code(const std::vector<report::Report>& reports) {
  base::ExitCode overall = base::ExitCode::ok;
  for (const report::Report& report : reports) {
    const auto code = static_cast<base::ExitCode>(report.exit_code);
    if (code == base::ExitCode::interrupted)
      return code;
    if (code != base::ExitCode::ok &&
        (code == base::ExitCode::cannot_test || overall == base::ExitCode::ok)) {
      overall = code;
    }
  }
  return overall;
}

}  // namespace rlcheck::app
