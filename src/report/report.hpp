#pragma once
// Everything one check of one target produced, as the reports show it.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checks/checks.hpp"
#include "checks/contract_fit.hpp"
#include "checks/run_stats.hpp"

namespace rlcheck::report {

struct Target {
  std::string url;        // passwords shown as ***
  std::string strategy;   // "sliding-window", or "script" with `script` set
  std::string script;     // --script path
  std::string key;        // the explicit key, or "rlcheck:<id>:…" for fresh keys
  bool embedded = false;  // a private redis-server started by rlcheck
  std::string method;     // http
  // --time-source: where the built-in strategy read now ("redis" or "client"); empty when the
  // flag was not given or the strategy reads no clock.
  std::string time_source;

  // What the target's kind says of it, so that no form of the report asks which kind it was.
  std::string name;     // among other targets (compare, JUnit, summaries): URL, script, strategy
  std::string limiter;  // what decides, in the header: the method, "script F" or the strategy
  // The HTML header's rows after the target's: {"method", "GET"}, or the limiter and its key.
  std::vector<std::pair<std::string, std::string>> rows;
  std::string clock;  // the limiter's own clock, which a virtual-clock run left real
  // Its limit and window may be read from its replies (each target's in a column of its own).
  bool advertises_limits = false;
  bool answers_statuses = false;  // its replies carry statuses (the human report counts them)
  std::string noun = "strategy";  // what compare's column of targets is headed: "endpoint"
};

// A Redis limiter's description (name, limiter, rows, clock) from its strategy or script.
void describe_redis_limiter(Target& target);
// An endpoint's description: named by its URL, decided by its method, on its own clock.
void describe_endpoint(Target& target);

// A built-in strategy as the reports name it: "sliding-window", or "sliding-window (client
// time)" when it read the client's clock (--time-source client; fixed-window always does, and
// is named as it is).
std::string strategy_label(const Target& target);

// What the Redis endpoint turned out to be (params.topology).
struct Topology {
  std::string kind = "standalone";  // "standalone" or "cluster"
  int masters = 1;
  bool tls = false;
};

// --stages: one stage as given (params.stages).
struct StageParam {
  double duration_ms = 0;
  double target_per_s = 0;
};

struct Params {
  int64_t requests = 0;
  int concurrency = 0;
  int runs = 0;
  int threads = 1;
  int64_t limit = 0;
  int64_t window_ms = 0;
  double interval_ms = 0;          // 0: unpaced
  std::string rate;                // open model: "40/s"; empty: closed model
  double duration_ms = 0;          // open model: how long each run sent
  std::vector<StageParam> stages;  // --stages; empty: none
  std::string arrivals;            // open model: "uniform" or "poisson"; empty: closed model
  std::string audit = "batch";     // --audit as the runs went: "batch" or "stream"
  int64_t identities = 1;
  std::string identity_dist = "uniform";      // --identity-dist: uniform, zipf:S, hot:P
  std::vector<std::string> source_addresses;  // --source-address; empty: not given
  std::vector<int64_t> clock_skew_ms;         // --clock-skew, whole ms; empty: not given
  // With --clock-skew: whether the target reads the skewed clock at all (a placeholder, a
  // built-in on the client's time); false: the skew changed nothing it was told.
  bool clock_skew_read = true;
  std::string contract;  // sliding, fixed, sliding-counter, token-bucket, gcra, queue
  // Several contracts: every part's spec, in the order given (contract then joins them with
  // " + "); --consume-on-deny ("none" or "checked"); --group-size (0: one group).
  std::vector<std::string> contracts;
  std::string cost;  // --cost / --cost-dist as given again ("1:80,10:15,100:5"); empty: 1 each
  std::string consume_on_deny;
  int64_t group_size = 0;
  std::string anchor;  // fixed: "clock" or "first-hit" (params.anchor); empty otherwise
  // "reading": --anchor was not given and this is the reading the runs were judged under (the
  // first that passed); else empty (given, or the strategy's own).
  std::string anchor_source;
  int64_t early_tolerance_ms = 1000;  // retry-after-accuracy: hints early by more fail
  int64_t late_tolerance_ms = 1000;   // retry-after-accuracy: hints late by more fail
  // The resolution of the hints judged (1: milliseconds, 1000: whole seconds; 0: none judged),
  // whose tolerances the two above are; `retry_tolerances` holds every resolution's.
  int32_t hint_resolution_ms = 0;
  // Where that resolution came from (params.sources.hint_resolution in JSON): "flag"
  // (--hint-resolution 1ms or 1s), "inferred" (auto: every hint a multiple of 1000 ms, judged
  // as whole seconds), "format" (the unit the reply carries: a script's milliseconds, HTTP's and
  // --reply cell's whole seconds); empty when no hint was judged.
  std::string hint_resolution_source;
  std::vector<checks::HintTolerance> retry_tolerances;
  std::optional<int64_t> burst;       // token-bucket / gcra
  std::string refill;                 // token-bucket / gcra / queue, "10/1m"
  std::optional<int64_t> queue;       // queue: how many may wait
  std::optional<int64_t> nodelay;     // queue: how many excess requests leave at once
  std::string queue_source;           // with `queue`: "flag" or "default"
  std::string limit_source = "flag";  // "flag", "default", or "advertised" (http: from headers)
  // Where the other judged parameters came from, as limit_source (params.sources in JSON).
  std::string window_source = "flag";  // "flag", "default", or "advertised"
  bool window_from_reset = false;      // advertised only as the largest reset, not as a w=
  // That reset was a timestamp read against the Date header (±1 s): the windows it allows, in
  // the order judged; window_ms is the first the checks pass under, else the reset as read.
  std::vector<int64_t> window_readings_ms;
  std::string burst_source;          // with `burst`: "flag" or "default"
  std::string refill_source;         // with `refill`: "flag" or "default"
  int pipeline = 1;                  // redis: requests in flight per connection (--pipeline)
  std::string http_client;           // http: "native" or "curl"; empty otherwise
  std::optional<Topology> topology;  // redis only
  bool virtual_clock = false;        // --virtual-clock: params.clock "virtual", else "wall"
};

// rlcheck redis --release-script: the releases of held leases over every run.
struct ReleaseCounts {
  uint64_t released = 0;    // answered without an error
  uint64_t failed = 0;      // an error reply, a lost connection: the place may stay taken
  std::string first_error;  // the first failure's message
};

// What the Redis connections met over every run (summary.redirects, summary.reconnects).
struct TransportCounts {
  uint64_t moved = 0;
  uint64_t ask = 0;
  uint64_t tryagain = 0;    // TRYAGAIN and CLUSTERDOWN replies retried
  uint64_t reconnects = 0;  // connections made again after one was lost
};

// Many hosts: one worker of the session, as the report shows it (workers[]).
struct WorkerSummary {
  int index = 0;
  std::string host;
  int64_t requests = 0;  // records it shipped over every run
  double clock_offset_ms = 0;
  double clock_uncertainty_ms = 0;
  bool lost = false;  // it stopped answering: its requests after that are missing
  int lost_in_run = 0;
};

struct Workers {
  std::string session;
  std::vector<WorkerSummary> list;
  double clock_uncertainty_ms = 0;  // how far two workers' clocks may disagree
  std::string lost;                 // who was lost, in words; empty: nobody
  int merged_by = 0;                // the worker that merged and judged (worker 0 lost: another)
};

// --find-max: one step of the search, as judged.
struct FindMaxStep {
  int64_t rate_per_s = 0;
  std::string
      phase;  // "ladder" (doubling) or "refine" (between the last held and the first missed)
  double duration_ms = 0;
  uint64_t planned = 0;
  uint64_t sent = 0;
  uint64_t allowed = 0;
  uint64_t denied = 0;
  uint64_t errors = 0;
  std::vector<double> percentiles_ms;  // one per --slo bound, in its order
  double p50_ms = 0;
  double p99_ms = 0;
  double lateness_p99_ms = 0;  // how late rlcheck sent (part of the latency)
  bool passed = false;
  bool missed_for_sure = false;  // missed even at the lower edge of the histogram's bucket
  bool client_bound = false;     // rlcheck sent too late to tell what the target can do
  // ...because every connection was busy for the whole step (runner::pool_saturated): the
  // pool, not rlcheck's CPU, limited what was offered.
  bool pool_bound = false;
  uint64_t connections = 0;  // requests that could be in flight at once (-p x --pipeline)
  std::string why;           // what missed, when it did
};

struct FindMax {
  std::string slo;  // as typed, normalised: "p99<10ms"
  std::vector<FindMaxStep> steps;
  std::optional<int64_t> max_rate;  // the highest rate that held; none: not even the first
  bool client_bound = false;        // the search ended on rlcheck's own limit: max_rate is a floor
  bool pool_bound = false;          // ...set by its connections (the last step's pool_bound)
  bool ceiling = false;             // every ladder step held: the target may serve more
};

struct Summary {
  int64_t allowed_min = 0;
  double allowed_median = 0;
  int64_t allowed_max = 0;
  int runs_over_limit = 0;
  double requests_per_second = 0;  // all requests over the summed run durations
  // --virtual-clock: the longest virtual span of a run, and the virtual and real time of all.
  std::optional<double> virtual_span_ms;
  double virtual_total_ms = 0;
  double real_total_ms = 0;
  std::optional<int64_t> max_rate;  // --find-max: the highest rate within the objective
};

// An over-admission asked again one request at a time on fresh state (runner/serial_rerun).
struct SerialRerun {
  int64_t requests = 0;  // sent, one at a time
  int64_t allowed = 0;
  int64_t peak = 0;      // the most admitted within the contract's span
  double allowance = 0;  // what the contract allows there
  bool within = false;   // the serial run kept the contract: the excess needs concurrency
};

struct Report {
  std::string mode = "redis";
  Target target;
  Params params;
  std::vector<checks::RunStats> runs;
  Summary summary;
  std::vector<checks::CheckResult> checks;
  checks::Verdict verdict = checks::Verdict::pass;
  int exit_code = 0;
  std::optional<checks::RetryVerification> retry_verification;  // --verify-retry-after
  uint64_t script_reloads = 0;  // NOSCRIPT replies answered by loading the script again
  std::optional<TransportCounts> transport;  // a target with a transport of its own (redis)
  std::optional<ReleaseCounts> releases;     // redis --release-script
  // redis: keys rlcheck wrote but could not delete (Redis was unreachable after the run).
  std::vector<std::string> keys_left;
  bool interrupted = false;
  // A failed test judged by a contract the user did not name: the one that fits what it saw.
  std::optional<checks::ContractFit> contract_fit;
  std::optional<Workers> workers;           // many hosts (--workers)
  std::optional<FindMax> find_max;          // --find-max
  std::optional<SerialRerun> serial_rerun;  // after an over-admission
};

Summary summarize(const std::vector<checks::RunStats>& runs);

// A percentile read from a latency histogram, to the histogram's precision: its buckets are up
// to 1/64 of their values wide (engine/histogram.hpp), so three significant digits say all it
// knows (44.564 ms, a bucket's edge, is 44.6). In the unit given; 0 stays 0.
double histogram_figure(double value);
// The same as text without an exponent or a trailing noise digit: "44.6", "0.125", "1230".
std::string histogram_text(double value);

// --virtual-clock: what the virtual time means, and what stayed real (params.clock_note in
// JSON, a line under the human report's header); empty on the wall clock.
std::string clock_note(const Report& report);

}  // namespace rlcheck::report
