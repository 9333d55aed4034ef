#pragma once
// What the run loop (runner/run_loop) asks of one kind of target: its clients for a run, what
// to prepare before a run and read after it, and the configurations its runs are judged
// against. A Redis limiter (runner/redis_target) and an HTTP endpoint (runner/http_target)
// implement it; the loop sequences every run of both.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks/run_stats.hpp"
#include "config/config.hpp"
#include "engine/client.hpp"
#include "engine/run.hpp"
#include "faults/fault_applier.hpp"
#include "report/report.hpp"
#include "runner/shared_test.hpp"

namespace rlcheck::runner {

// The clients of one run, owned by the target until it is asked for the next run's.
struct RunClients {
  engine::ClientFactory* factory = nullptr;
  config::LoadConfig load;  // the run's load as these clients carry it
  // A failover@ fault acts on the master of this key ("": the first master).
  std::string failover_key;
  // The transport counts of the run's clients (redis: moved, reconnects...); empty: none.
  std::function<RunCounters()> counters;
  // What the target adds to the run's result once its threads joined (redis: when each
  // held lease was released); empty: nothing.
  std::function<void(engine::RunResult&)> finish;
};

// Which limiter state a run's requests meet: `state` is the run number (a probe: the number
// of a fresh identity), `label` what the state's keys are named after.
struct StateChoice {
  int state = 1;
  uint64_t seed = 0;  // of the run's clients ({uuid}, script arguments)
  std::string label;  // redis: the strategy's name, or "probe"
  // A state of rlcheck's own, whatever the configuration names (a probe's: never --key).
  bool fresh = false;
};

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
  // An advertised policy (q per w) whose other readings are tried before the test fails.
  bool policy_advertised = false;
  // --anchor was not given for a contract whose windows need one: this is one reading of it.
  bool anchor_read = false;
  // Why the state a run meets may be an earlier test's (an explicit --key, an identity every
  // invocation shares), for a run denied from its first request; "" when the target cannot say.
  std::string state_note;
};

class Target {
 public:
  virtual ~Target() = default;

  // Once, before anything is sent: what the test needs of the target (redis: reachable, its
  // script loaded). Throws FatalError.
  virtual void prepare_test() = 0;
  // The address in messages ("no connection to ADDRESS became ready").
  virtual std::string address() const = 0;
  // The report's target, and the params only this kind fills.
  virtual void describe(report::Report& report) const = 0;
  // What --fault acts on; vetted by the loop before the first run.
  virtual faults::FaultTarget fault_target() = 0;
  // The progress label of run `run` of `runs`, and the name its records are written under.
  virtual std::string run_label(int run, int runs) const = 0;
  virtual std::string records_name() const = 0;

  // Before run `run`; `leader`: this process prepares the shared state (many hosts: worker
  // 0). False when Ctrl-C came first. Throws FatalError when the first run cannot start.
  virtual bool prepare_run(int run, bool leader) = 0;
  // The pause prepare_run waits before run `run` (--between-runs), which a virtual-clock run
  // spends on the virtual clock instead.
  virtual std::chrono::nanoseconds pause_before_run(int) const { return {}; }
  // A reading of the clock the limiter keeps on its own side (Redis TIME), paired with the
  // steady clock; nullopt where there is none to read, or it could not be read.
  virtual std::optional<engine::ClockReading> read_limiter_clock() { return std::nullopt; }
  // The clients of a run meeting `state`, for `load` (valid until the next call).
  virtual RunClients clients(const StateChoice& state, const config::LoadConfig& load) = 0;
  // The state run `run` of the test meets.
  virtual StateChoice run_state(int run) const = 0;
  // Whether each run's state is one no earlier run met (redis: a key of rlcheck's own per run;
  // http: {run} where the identity is read): a run numbered after the last meets fresh state.
  virtual bool fresh_state_per_run() const { return false; }
  // The state run `run` left, read right after it (nothing for a target without one).
  virtual StateAudit audit_state(int run, engine::RecordView records) = 0;
  // After the run and its retry (`retried`): the state rlcheck made is removed; what could
  // not be joins `left`.
  virtual void clean_up(int run, const StateAudit& audit,
                        const std::vector<engine::RequestRecord>& retried,
                        std::vector<std::string>& left) = 0;

  // Whether the configurations the runs are judged against are known before the runs (then
  // each run is summarized as it ends, and its records let go).
  virtual bool judged_before_runs() const = 0;
  // Those configurations, in the order they are tried; `results`: every run (none when
  // judged_before_runs()). Throws FatalError when the runs cannot be judged at all.
  virtual std::vector<Judging> judgings(const std::vector<engine::RunResult>& results,
                                        bool interrupted) = 0;
  // The longest --verify-retry-after wait, given the runs kept so far.
  virtual std::chrono::milliseconds longest_retry_wait(
      const std::vector<engine::RunResult>& results) const = 0;
};

}  // namespace rlcheck::runner
