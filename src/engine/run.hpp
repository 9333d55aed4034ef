#pragma once
// One run: P clients over T worker threads fire N requests at the target and record each.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "engine/client.hpp"
#include "engine/clock_drift.hpp"
#include "engine/histogram.hpp"
#include "engine/live_stats.hpp"
#include "engine/record_log.hpp"
#include "engine/record_stream.hpp"
#include "engine/request_record.hpp"
#include "engine/schedule.hpp"

namespace rlcheck::engine {

// Sees every record as it is made, on the worker thread that made it. For tests that must
// act at an exact point of a run (flush the script cache after the 5th reply, say), and for
// faults timed on the run's clock.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_record(const RequestRecord& record) = 0;
  // Once per run, when the start line is crossed (before the first request leaves), with the
  // instant records count from (RunResult::start). Called on one worker thread; must not block.
  virtual void on_start(std::chrono::steady_clock::time_point /*start*/) {}
};

// --stages: one stage's requests. planned: due in it; sent: left (the rest were not sent);
// allowed, denied, errors: their decisions; latency_ns as RunResult's; lateness_ns: sent - due.
struct StageTally {
  uint64_t planned = 0, sent = 0, allowed = 0, denied = 0, errors = 0;
  Histogram latency_ns;
  Histogram lateness_ns;
  // Adds another worker's tally of the same stage (`planned` is the whole run's on each: kept).
  void merge(const StageTally& other) {
    planned = std::max(planned, other.planned);
    sent += other.sent;
    allowed += other.allowed;
    denied += other.denied;
    errors += other.errors;
    latency_ns.merge(other.latency_ns);
    lateness_ns.merge(other.lateness_ns);
  }
};

struct RunResult {
  RecordLog records;  // one per request, ordered by seq; empty when streamed
  // RunHooks::sink took the records as they came; of the requests, `unsent` no connection took
  // (errors of kind not_sent, which the sink never saw).
  bool streamed = false;
  uint64_t unsent = 0;
  Histogram latency_ns;  // send to final reply, of requests that got one
  // The open model (wall clock): how late each request left, sent - due (every sent request).
  Histogram lateness_ns;
  std::vector<StageTally> stages;  // --stages: one per stage, in order; empty without
  // When each request was due (the records' due_us); set by execute_run.
  std::shared_ptr<const Schedule> schedule;
  int64_t duration_ns = 0;  // start line to the last reply
  // --virtual-clock: records, duration_ns and start_wall_ns are virtual instants (the virtual
  // start line, unix ns); this is how long the run took on the real clock.
  bool virtual_clock = false;
  int64_t real_duration_ns = 0;
  std::chrono::steady_clock::time_point start;     // the start line: records count from it
  int64_t start_wall_ns = 0;                       // the start line on the wall clock (epoch)
  bool interrupted = false;                        // stopped by Ctrl-C; records are partial
  int clients_ready = 0;                           // connections ready at the start line
  std::string connect_error;                       // why a connection failed, when one did
  std::map<ErrorKind, std::string> error_samples;  // first message seen per error kind
  std::string hint_sample;                         // the first malformed retry hint
  std::string header_sample;                       // the first malformed rate-limit header
  std::map<std::string, int64_t> by_node;          // Redis Cluster: requests decided per master
  // http: responses per set of several policies they advertised ((quota, window s) each, in
  // the order given); what rlcheck http reads as several contracts when given none.
  std::map<std::vector<std::pair<int64_t, int64_t>>, int64_t> policy_sets;
  bool stopped_on_errors = false;  // more requests errored than load.stop_after_errors
  bool cancelled = false;          // load.start_gate said not to start: no request left
  bool abandoned = false;          // load.abandon was set: records hold the requests sent
  // The limiter's clock against the steady clock over the run (runner/clock_watch); unset
  // under the virtual clock, and where no reading was made.
  std::optional<ClockDrift> limiter_clock;
  // rlcheck redis --release-script: each admission's release (its seq) and when its reply came
  // (ns from the start line; INT64_MAX when none came: its place may have stayed taken).
  std::vector<std::pair<uint64_t, int64_t>> lease_ends;
};

// The requests of a run this process sends (load.requests, or its share of them).
uint64_t share_size(const config::LoadConfig& load);

// Connects every client before the first request leaves, then lets the first P requests go
// together (a barrier across threads), so a check-then-act race shows every time rather than
// by luck. Requests no live connection could take are recorded as ErrorKind::not_sent, unless
// the run stopped on errors (load.stop_after_errors): then only the requests sent are recorded.
// While the run lasts, hooks.progress (if set) is called on the calling thread four times a
// second with the run's counts so far; they come from hooks.live (if set, where each worker
// thread writes its own cell; else from counters of the run's own).
struct RunProgress {
  uint64_t sent = 0;     // requests that left
  uint64_t allowed = 0;  // requests decided so far, by outcome
  uint64_t denied = 0;
  uint64_t errors = 0;
  uint64_t done() const { return allowed + denied + errors; }
};
using ProgressFn = std::function<void(const RunProgress& progress)>;

// Who watches a run: the observer sees each record, progress the counts four times a second,
// and live (which outlives runs) counts every request as it is sent and decided. With a sink,
// the records go to it as they come (at least every 20 ms) and the run keeps none.
struct RunHooks {
  RunObserver* observer = nullptr;
  ProgressFn progress;
  LiveStats* live = nullptr;
  RecordSink* sink = nullptr;
  // Called on the calling thread four times a second while the run lasts, besides progress.
  std::function<void()> tick;
};

RunResult execute_run(ClientFactory& factory, const config::LoadConfig& load,
                      const RunHooks& hooks);
inline RunResult execute_run(ClientFactory& factory, const config::LoadConfig& load,
                             RunObserver* observer = nullptr, const ProgressFn& progress = {}) {
  return execute_run(factory, load, RunHooks{observer, progress, nullptr, nullptr, {}});
}

}  // namespace rlcheck::engine
