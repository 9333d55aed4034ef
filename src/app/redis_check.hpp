#pragma once
// Drives one Redis limiter through the configured runs and judges it.

#include <memory>
#include <string>

#include "config/config.hpp"
#include "coord/session.hpp"
#include "engine/run.hpp"
#include "faults/fault_applier.hpp"
#include "redis/connect_target.hpp"
#include "redis/strategy.hpp"
#include "report/records_writer.hpp"
#include "report/report.hpp"

namespace rlcheck::app {

// The Redis of this invocation and the id its fresh keys live under (rlcheck:<id>:...).
struct RedisSession {
  redis::ConnectedTarget target;
  std::string instance_id;
  uint64_t seed = 0;
};

// Connects as connect_target says; throws FatalError(cannot_test) naming what was tried.
// With --fault, also what the faults need: restart@ the private redis-server (else
// FatalError(usage)), failover@ a cluster whose masters have replicas (else cannot_test).
RedisSession open_redis_session(const config::Config& config);

// The Redis --fault acts on in rlcheck redis and compare: the session's.
faults::FaultTarget fault_target_of(RedisSession& session, const config::Config& config);

// Loads the script of a Lua strategy (or --script) into the server's cache; nullopt for
// strategies made of plain commands. Throws FatalError: usage for an unreadable --script,
// cannot_test for a script the server refuses.
std::optional<redis::LoadedScript> load_limiter_script(redis::SyncClient& control,
                                                       const config::Config& config,
                                                       config::Strategy strategy);

// Runs `strategy` (config.redis.script_path for Strategy::script) config.load.runs times,
// each from a fresh limiter state, and evaluates the checks. Throws FatalError(cannot_test)
// only before the first run: Redis unreachable, a script it refuses, no connection ready.
// Once a run has started, what goes wrong is reported instead: a run stops sending once its
// errors exceed --max-errors (RunStats::stopped_on_errors), a lost Redis leaves the key-ttl
// audit unread (RunStats::keys_unread) and the keys it could not delete in keys_left, and a
// later run without a connection counts its requests as errors. Exit code left 0: the caller
// decides it. With `records`, every run's requests are written to it, under the strategy's
// name (the script's path for --script). With `shared` (many hosts), this process sends its
// share of each run; worker 0 alone prepares (--reset, --fault), merges, audits the keys and
// judges, and the others' report is empty.
report::Report check_redis_limiter(RedisSession& session, const config::Config& config,
                                   config::Strategy strategy,
                                   engine::RunObserver* observer = nullptr,
                                   report::RecordsWriter* records = nullptr,
                                   coord::Session* shared = nullptr);

}  // namespace rlcheck::app
