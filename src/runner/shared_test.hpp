#pragma once
// A test shared by many hosts (--workers N), as the redis and http checks see it: join the
// session, run this worker's share of each run on the agreed start, and (worker 0) merge the
// shares into the run the checks judge.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "coord/session.hpp"
#include "engine/client.hpp"
#include "engine/run.hpp"
#include "judging/contract_choice.hpp"
#include "judging/judged_target.hpp"
#include "report/report.hpp"

namespace rlcheck::runner {

// Joins the session config.workers names; nullptr when the test runs alone. Throws FatalError:
// usage (an index taken, a worker running another test), cannot_test (the coordinator cannot
// be reached, a worker did not join within --join-timeout).
// The "name=value" lines that say which target a shared test is on (its kind's).
using TargetLines = std::vector<std::pair<std::string, std::string>>;

std::unique_ptr<coord::Session> join_session(const config::Config& config,
                                             const TargetLines& target);

// The load settings every worker must share, one "name=value" a line: the target's kind, the
// lines that name the target, then the load.
std::string test_fingerprint(const config::Config& config, const TargetLines& target);

using judging::RunCounters;  // transport counts, summed over workers

// One run, alone (session null: engine::execute_run) or as this worker's share: requests i
// with i mod N = K, its share of the connections, started at the instant the workers agree
// on, then shipped. Worker 0 gets back the merged run (every worker's records on the common
// clock, and in `others` the other workers' counters summed); the others their own share.
// Every worker ships its share, with `own_counters()`. RunResult::cancelled: the session ended
// before the run could start. Throws FatalError(cannot_test) when the coordinator fails.
engine::RunResult execute_shared_run(coord::Session* session, int run,
                                     engine::ClientFactory& factory, config::LoadConfig load,
                                     const engine::RunHooks& hooks,
                                     const std::function<RunCounters()>& own_counters,
                                     RunCounters& others);

// Many hosts, a worker other than 0, after its share of a run: counts the run in
// `runs_shipped` (unless it never started) and says whether the runs end here (it never
// started, Ctrl-C, a worker lost).
bool shared_runs_end(const engine::RunResult& result, const coord::Session& session,
                     int& runs_shipped);

// Many hosts, a worker other than 0 after its runs: when worker 0 was lost and this worker is
// the first to take its place, every worker's shipment of runs 1..runs_shipped is merged and
// handed to `judge_run` (run number, merged run), `counters` sums every worker's counters, and
// the answer is true: this worker then reports for everyone. False: worker 0 (or another in
// its place) reports. Throws FatalError(cannot_test) when the coordinator fails.
bool judge_in_place_of_lost_leader(coord::Session* session, int runs_shipped,
                                   const std::function<void(int, engine::RunResult)>& judge_run,
                                   RunCounters& counters);

}  // namespace rlcheck::runner
