#pragma once
// What judging asks of the target whose runs it judges: the configurations to judge them
// against (with what only the target knows of each), and the report's description of it. The
// run loop's targets (runner::Target) answer it; judging never sees how they send.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checks/run_stats.hpp"
#include "config/config.hpp"
#include "engine/run.hpp"
#include "report/report.hpp"

namespace rlcheck::judging {

// Transport counts a run's clients gathered (redis: moved, reconnects...), summed over workers.
using RunCounters = std::map<std::string, uint64_t>;

// What the state a run left was found to be, right after it (redis: its keys and their TTLs).
struct StateAudit {
  std::vector<std::string> keys;  // the keys the run wrote
  std::vector<checks::KeyTtl> key_ttls;
  std::string unread;  // why the state could not be read; "" when it was
};

// A configuration the runs are judged against, with what only the target knows of it.
struct Judging {
  config::Config config;                     // --limit and --window, as given or advertised
  std::optional<config::Strategy> strategy;  // a built-in strategy's own contract applies
  std::optional<std::string> limit_source;   // else as configured_params says
  std::optional<std::string> window_source;
  bool window_from_reset = false;
  std::vector<int64_t> window_readings_ms;
  bool key_ttl_applies = true;
  bool retry_hint_optional = false;
  // --reset-cmd: every run meets the state the command just reset.
  bool reset_before_each_run = false;
  // An advertised policy (q per w) whose other readings are tried before the test fails.
  bool policy_advertised = false;
  // --anchor was not given for a contract whose windows need one: this is one reading of it.
  bool anchor_read = false;
  // Why the state a run meets may be an earlier test's (an explicit --key, an identity every
  // invocation shares), for a run denied from its first request; "" when the target cannot say.
  std::string state_note;
};

class JudgedTarget {
 public:
  virtual ~JudgedTarget() = default;

  // The report's target, and the params only this kind fills.
  virtual void describe(report::Report& report) const = 0;
  // Whether the configurations the runs are judged against are known before the runs (then
  // each run is summarized as it ends, and its records let go).
  virtual bool judged_before_runs() const = 0;
  // Those configurations, in the order they are tried; `results`: every run (none when
  // judged_before_runs()). Throws FatalError when the runs cannot be judged at all.
  virtual std::vector<Judging> judgings(const std::vector<engine::RunResult>& results,
                                        bool interrupted) = 0;
};

}  // namespace rlcheck::judging
