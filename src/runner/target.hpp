#pragma once
// What the run loop (runner/run_loop) asks of one kind of target: its clients for a run, what
// to prepare before a run and read after it, and the configurations its runs are judged
// against (judging/judged_target). Each kind of target implements it in its folder
// (targets/<kind>/); the loop sequences every run of every kind.

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
#include "judging/judged_target.hpp"
#include "report/report.hpp"

namespace rlcheck::runner {

// What is judged of a target's runs (judging/judged_target).
using judging::Judging;
using judging::RunCounters;
using judging::StateAudit;

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

class Target : public judging::JudgedTarget {
 public:
  // Once, before anything is sent: what the test needs of the target (redis: reachable, its
  // script loaded). Throws FatalError.
  virtual void prepare_test() = 0;
  // The address in messages ("no connection to ADDRESS became ready").
  virtual std::string address() const = 0;
  // What --fault acts on; vetted by the loop before the first run.
  virtual faults::FaultedRedis faulted_redis() = 0;
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
  // The state run `run` left, read right after it: nothing for a target whose state is behind
  // it (an endpoint, a service).
  virtual StateAudit audit_state(int, engine::RecordView) { return {}; }
  // After the run and its retry (`retried`): the state rlcheck made is removed; what could
  // not be joins `left`. Nothing to remove where rlcheck made no state of its own.
  virtual void clean_up(int, const StateAudit&, const std::vector<engine::RequestRecord>&,
                        std::vector<std::string>&) {}

  // The longest --verify-retry-after wait, given the runs kept so far.
  virtual std::chrono::milliseconds longest_retry_wait(
      const std::vector<engine::RunResult>& results) const = 0;
};

// One run of `load` meeting `state`, outside the loop's sequence (a probe's send, a serial
// rerun): the target's clients, the run, and what the target adds once it ended.
engine::RunResult run_once(Target& target, const StateChoice& state,
                           const config::LoadConfig& load);

}  // namespace rlcheck::runner
