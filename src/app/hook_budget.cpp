#include "app/hook_budget.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/interrupt.hpp"
#include "runner/find_max.hpp"
#include "targets/target_kind.hpp"

namespace rlcheck::app {
namespace {

constexpr double k_run_overhead_s = 5;      // connections, the state audit, clean-up
constexpr double k_fault_s = 10;            // a fault's own cost (a redis-server restarted)
constexpr double k_reset_cmd_s = 60;        // --reset-cmd: a shell command of unknown length
constexpr double k_private_redis_s = 10;    // starting a private redis-server
constexpr double k_private_cluster_s = 30;  // starting a private Redis Cluster
constexpr double k_scenario_serve_s = 10;   // a scenario's `rlcheck serve`
constexpr double k_lag_allowance = 1.1;     // a paced run 10 % behind its plan is warned about
constexpr double k_margin = 1.25;
constexpr double k_margin_s = 30;

double seconds(config::Nanos duration) {
  return static_cast<double>(duration.count()) / 1e9;
}

// ceil(requests / lanes) requests one after another, each taking the whole --timeout.
double serial_s(const config::LoadConfig& load, int64_t lanes) {
  const int64_t rounds =
      (load.requests + std::max<int64_t>(lanes, 1) - 1) / std::max<int64_t>(lanes, 1);
  return static_cast<double>(rounds) * seconds(load.timeout);
}

// The span of the open model's or --interval's plan; 0 for the closed model unpaced.
double planned_span_s(const config::LoadConfig& load) {
  if (!load.stages.empty()) {
    double span = 0;
    for (const config::Stage& stage : load.stages)
      span += seconds(stage.duration);
    return span;
  }
  if (load.rate) {
    return static_cast<double>(load.requests) * seconds(load.rate->period) /
           static_cast<double>(load.rate->tokens);
  }
  return static_cast<double>(load.requests) * seconds(load.interval);
}

double load_s(const config::Config& config) {
  const config::LoadConfig& load = config.load;
  if (load.virtual_clock)
    return serial_s(load, std::min<int64_t>(load.concurrency, load.identities));
  if (config.find_max.enabled) {
    constexpr int steps =
        runner::FindMaxSearch::k_max_ladder_steps + runner::FindMaxSearch::k_refine_steps;
    return steps * (seconds(config.find_max.step) * k_lag_allowance + seconds(load.timeout) +
                    k_run_overhead_s);
  }
  const double span = planned_span_s(load);
  if (span > 0)
    return span * k_lag_allowance + seconds(load.timeout);
  return serial_s(load, static_cast<int64_t>(load.concurrency) * config.redis.pipeline);
}

targets::RunPacing pacing_of(const config::Config& config) {
  const targets::TargetKind& kind = targets::kind_of(config);
  return kind.pacing != nullptr ? kind.pacing(config) : targets::RunPacing{};
}

// The target's limit and window may be read from its replies, so a hint's wait is unknown
// before the runs.
bool limits_from_replies(const config::Config& config) {
  return targets::kind_of(config).command.limits_from_replies;
}

}  // namespace

std::expected<double, std::string> longest_check_s(const config::Config& config) {
  const config::LoadConfig& load = config.load;
  const double runs = config.find_max.enabled ? 1 : load.runs;
  double per_run = k_run_overhead_s + k_fault_s * static_cast<double>(config.faults.faults.size());
  const targets::RunPacing pacing = pacing_of(config);
  if (pacing.reset_before_each_run)
    per_run += k_reset_cmd_s;
  per_run += seconds(load.boundary_window);
  double target = runs * (per_run + load_s(config)) + (runs - 1) * seconds(pacing.between_runs);
  if (config.checks.verify_retry_after) {
    if (limits_from_replies(config) && !config.checks.window_given &&
        !config.checks.max_retry_after) {
      return std::unexpected(
          "--verify-retry-after: waits as long as the server's advertised window, unknown "
          "before the run; give --max-retry-after (or --window) so the hook's timeout covers it");
    }
    target += seconds(config.checks.max_retry_after.value_or(config.checks.window)) +
              seconds(load.timeout);
  }
  double total = static_cast<double>(pacing.targets) * target;
  if (targets::kind_of(config).command.state_in_redis)
    total += config.redis.embedded_cluster > 0 ? k_private_cluster_s : k_private_redis_s;
  if (config.workers.distributed())
    total += seconds(config.workers.join_timeout);
  return total;
}

std::expected<int64_t, std::string> hook_timeout_s(const config::Config& config) {
  const auto longest = longest_check_s(config);
  if (!longest)
    return std::unexpected(longest.error());
  return static_cast<int64_t>(std::ceil(*longest * k_margin + k_margin_s));
}

std::expected<int64_t, std::string> hook_timeout_s(const std::vector<config::Config>& scenarios) {
  double longest = 0;
  for (const config::Config& scenario : scenarios) {
    auto check = longest_check_s(scenario);
    if (!check)
      return std::unexpected(check.error());
    longest += *check + k_scenario_serve_s;
  }
  return static_cast<int64_t>(std::ceil(longest * k_margin + k_margin_s));
}

HookDeadline::HookDeadline(std::chrono::seconds timeout) : timeout_(timeout) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::max(timeout - k_reporting_time, timeout / 2);
  thread_ = std::thread([this, deadline] {
    std::unique_lock lock(mutex_);
    if (!wake_.wait_until(lock, deadline, [this] { return done_; })) {
      passed_ = true;
      engine::request_interrupt();
    }
  });
}

HookDeadline::~HookDeadline() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::string deadline_line(const HookDeadline& deadline) {
  return fmt::format(
      "rlcheck: the check did not finish within the hook's timeout ({}s, as hook-config "
      "computes it): stopped before it, so that the stop is blocked rather than the hook "
      "cancelled; what it measured so far:\n",
      deadline.timeout().count());
}

}  // namespace rlcheck::app
