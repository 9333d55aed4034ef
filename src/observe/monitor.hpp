#pragma once
// What watches a test while it runs: the live counts the workers write, the progress line on
// stderr, and (--metrics-listen) the /metrics endpoint that serves them, with the check
// statuses once the test is judged. One for all the targets of a command, so compare's
// targets count into the same metrics (labelled by target).

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checks/checks.hpp"
#include "config/config.hpp"
#include "engine/live_stats.hpp"
#include "engine/run.hpp"
#include "engine/schedule.hpp"
#include "observe/metrics_server.hpp"
#include "observe/openmetrics.hpp"
#include "observe/progress.hpp"
#include "observe/schedule_lag.hpp"

namespace rlcheck::observe {

class Monitor {
 public:
  // With `serve` and config.observe.metrics_listen, binds the metrics endpoint now: throws
  // FatalError (cannot_test) naming the address and why it cannot listen. Port 0 says the
  // address chosen on stderr.
  explicit Monitor(const config::Config& config, bool serve = true);
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // Run `run` of `target` (its records name) begins: what execute_run is given (its tick
  // watches an open-model run's lag behind its schedule, runner/schedule_lag).
  engine::RunHooks begin_run(const std::string& target, int run, std::string label,
                             const config::LoadConfig& load, engine::RunObserver* observer);
  void end_run();
  // A target's test was judged: its checks' statuses and its verdict join the metrics.
  void judged(const std::string& target, const std::vector<checks::CheckResult>& checks,
              checks::Verdict verdict);
  // After the report is delivered: serves the metrics --metrics-linger longer (Ctrl-C ends
  // the wait), saying so on stderr.
  void linger();

  engine::LiveStats& live() { return live_; }

 private:
  std::string render(observe::Format format) const;

  const config::Config& config_;
  engine::LiveStats live_;
  ProgressLine progress_;
  // The open model's plan of the run under way, and when it began (the rate it asks for now).
  struct Offered {
    std::shared_ptr<const engine::Schedule> schedule;
    std::chrono::steady_clock::time_point start;
  };
  mutable std::mutex mutex_;  // guards extras_ and offered_
  observe::Extras extras_;
  std::optional<Offered> offered_;
  // The open model's run under way, watched for lag at each tick (on the tick's thread only).
  struct LagWatch {
    ScheduleLag lag;
    int run = 0;
    uint64_t slots = 0;
    std::optional<std::chrono::steady_clock::time_point> start;  // when its first request left
    bool warned = false;
  };
  void watch_lag(LagWatch& watch);
  // The schedule warnings: not with --hook (its stderr is the reason for a block); --quiet
  // keeps them, as every warning (it trims the report, not what went wrong with the load).
  bool warn_lag_;
  std::unique_ptr<observe::MetricsServer> server_;
};

}  // namespace rlcheck::observe
