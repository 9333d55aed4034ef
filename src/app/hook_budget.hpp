#pragma once
// How long a Stop hook's check may take: the "timeout" hook-config writes into the hook entry.
// Claude Code cancels a command hook at its timeout (600 s when none is given in current
// releases, 60 s in older ones), and a cancelled hook does not block: a gate whose check
// outlasts its timeout lets every stop through. So the timeout covers the planned runs at their
// longest, with a margin.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <expected>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"

namespace rlcheck::app {

// Seconds one command's runs may take at the longest (before the margin):
//   per run:  the load's length (below) + 5 s (connections, the state audit, clean-up)
//             + 10 s per --fault (a restarted redis-server) + 60 s with --reset-cmd (a shell
//             command rlcheck cannot see into) + --between-runs (before every run but the
//             first) + the window of --start-before-boundary (the wait for a boundary);
//   the load: closed and unpaced: ceil(requests / (connections x pipeline)) x --timeout, as if
//             every request took the whole timeout; paced (--interval, --rate/--duration,
//             --stages): the plan's span x 1.1 (a run further behind its schedule than 10 % is
//             warned about, as a load that was not the one planned) + --timeout for the last
//             reply; --virtual-clock: ceil(requests / min(connections, identities)) x --timeout;
//             --find-max: 19 steps (16 doubling, 3 refining), each paced for --duration;
//   per target: --verify-retry-after's wait (--max-retry-after, else the window) + --timeout;
//   compare: every target; run: every scenario, + 10 s each (a `rlcheck serve` it may start);
//   once: 10 s to start a private redis-server (30 s a private cluster), --join-timeout with
//   --workers.
// The error names the flag that leaves the length unknown: http's --verify-retry-after waits
// what the server advertises unless --window or --max-retry-after bounds it.
std::expected<double, std::string> longest_check_s(const config::Config& config);

// The hook's timeout: the longest check + 25 % + 30 s, in whole seconds.
std::expected<int64_t, std::string> hook_timeout_s(const config::Config& config);

// `rlcheck run`: the same over its scenarios, run one after another.
std::expected<int64_t, std::string> hook_timeout_s(const std::vector<config::Config>& scenarios);

// --hook: the check finishes or blocks within the timeout hook-config wrote, even when the
// target is slower than the budget assumes (a paced run far behind its schedule): 15 s before
// that timeout (recomputed from the same command line), the runs are stopped as Ctrl-C stops
// them, and the hook blocks with what they measured. Ends its thread when destroyed.
class HookDeadline {
 public:
  explicit HookDeadline(std::chrono::seconds timeout);
  ~HookDeadline();
  HookDeadline(const HookDeadline&) = delete;
  HookDeadline& operator=(const HookDeadline&) = delete;

  // Whether the deadline passed and stopped the runs.
  bool passed() const { return passed_.load(); }
  std::chrono::seconds timeout() const { return timeout_; }

  static constexpr std::chrono::seconds k_reporting_time{15};

 private:
  std::chrono::seconds timeout_;
  std::atomic<bool> passed_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// The line a hook whose deadline passed starts its reason with.
std::string deadline_line(const HookDeadline& deadline);

}  // namespace rlcheck::app
