#pragma once
// One run reduced to the figures that checks and reports use.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/ban_audit.hpp"
#include "checks/composite_audit.hpp"
#include "checks/concurrency_audit.hpp"
#include "checks/contract_audit.hpp"
#include "checks/fault_window.hpp"
#include "checks/lockout.hpp"
#include "checks/queue_audit.hpp"
#include "checks/remaining_units.hpp"
#include "checks/retry_accuracy.hpp"
#include "checks/slow_down_audit.hpp"
#include "checks/timeline.hpp"
#include "engine/run.hpp"

namespace rlcheck::checks {

struct RetryHintStats {
  int64_t present = 0;         // denials that carried a hint, valid or not
  int64_t missing = 0;         // denials whose limiter gives hints but gave none this time
  int64_t invalid = 0;         // negative or malformed hints (a Retry-After of "1.5")
  std::string invalid_sample;  // the first malformed one, as the target sent it
  int64_t over_bound = 0;      // hints above the bound (--max-retry-after, default the window)
  std::optional<int64_t> min_ms;
  std::optional<int64_t> max_ms;
  bool expected = false;  // some denial came from a limiter that gives hints
  int64_t silent = 0;     // denials with no hint and none expected (missing, once expected)
};

// What HTTP responses advertised in their rate-limit headers.
struct AdvertisedStats {
  std::optional<int64_t> limit_min, limit_max;
  std::optional<int64_t> remaining_min, remaining_max;
  std::optional<int64_t> reset_min_s, reset_max_s;
  int64_t malformed = 0;  // responses with a malformed rate-limit field
  std::string malformed_sample;
  bool any() const { return limit_min || remaining_min || reset_min_s || malformed > 0; }
};

// A limiter key's PTTL right after its run: -1 no TTL, -2 gone (expired or never written).
struct KeyTtl {
  std::string key;
  int64_t ttl_ms = -2;
  // MEMORY USAGE of the key, read for the run's key with the longest TTL; -1: not read (not
  // that key, or a server that refused it).
  int64_t memory_bytes = -1;
};

struct LatencyMs {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  double p999 = 0;  // the 99.9th percentile
};

// --stages: one stage of a run (runs[].stages[]): its plan, and what its requests met.
struct StageStats {
  double from_ms = 0, to_ms = 0;  // from the start line
  double target_from_per_s = 0, target_to_per_s = 0;
  uint64_t planned = 0, sent = 0, allowed = 0, denied = 0, errors = 0;
  double latency_p50_ms = 0, latency_p99_ms = 0;
  double lateness_p99_ms = 0;
};

// The open model on the wall clock: how late requests left (sent - due), in ms.
struct LatenessMs {
  double p50 = 0, p99 = 0, max = 0;
};

struct RunStats {
  int run = 0;  // 1-based
  int64_t requests = 0;
  int64_t allowed = 0;
  int64_t denied = 0;
  int64_t errors = 0;
  // Of the errors, those that may have reached the limiter (engine::is_unknown): possibly
  // admitted, so a shortfall or a denial they could explain is not held against the limiter.
  int64_t unknown = 0;
  double duration_ms = 0;  // on the real clock, even under --virtual-clock
  // --virtual-clock: the virtual time the run's requests spanned (first to last instant).
  std::optional<double> virtual_span_ms;
  // The limiter's clock against rlcheck's over the run (engine/clock_drift); its slack_ns was
  // added to the audits' clock allowance.
  std::optional<engine::ClockDrift> limiter_clock;
  LatencyMs latency;
  std::optional<LatenessMs> lateness;  // the open model on the wall clock
  std::vector<StageStats> stages;      // --stages
  RetryHintStats retry;
  std::map<std::string, int64_t> error_kinds;        // kind name (status-503 for statuses) -> count
  std::map<std::string, int64_t> status_counts;      // http: "200" -> count
  AdvertisedStats advertised;                        // http
  std::map<std::string, std::string> error_samples;  // kind name -> first message
  // http: status-NNN errors that carried a Retry-After, by kind name: denials under a status
  // --denied-status does not name (nginx's 503)
  std::map<std::string, int64_t> hinted_status_errors;
  AdmissionPeak peak;  // the worst span against the limit
  // The most admissions of one identity in flight at one instant (admitted_in_flight_at_once),
  // read only when the peak exceeded the limit (0 otherwise).
  int64_t admitted_at_once = 0;
  ContractAudit contract;                     // peak's identity, and the boundary burst
  Utilisation utilisation;                    // the identity with the lowest share
  RetryAccuracy retry_accuracy;               // hint errors against the contract
  std::optional<Timeline> timeline;           // --html only
  std::vector<std::string> keys_without_ttl;  // redis: limiter keys left with no TTL
  bool interrupted = false;
  // Denials made while the contract surely had room (utilisation).
  LockOuts lockouts;
  // Audited as the run went (checks/stream_audit): the timeline and the contract fit need
  // every record kept, and were not built.
  bool streamed = false;
  // Streamed: records that came out of send order, left out of the audits over time.
  int64_t streamed_out_of_order = 0;
  int64_t streamed_closed_window = 0;  // fell in a fixed window already closed: not audited
  // First send to last send of the decided requests, and how long state from before the run
  // can count against it (contract_memory_ns): utilisation judges runs longer than that.
  int64_t send_span_ns = 0;
  int64_t memory_ns = 0;
  // redis: the PTTL of every key the run touched, read right after it.
  std::vector<KeyTtl> key_ttls;
  // redis: why those keys could not be read after the run (Redis unreachable); empty: they were.
  std::string keys_unread;
  // More requests errored than --max-errors, so no more were sent: the run ended early.
  bool stopped_on_errors = false;
  std::map<std::string, int64_t> by_node;  // Redis Cluster: requests per master ("host:port")
  std::vector<FaultWindow> faults;         // --fault: what was applied during this run
  // --contract queue: departures and waits (contract.worst is then the departures' span, and
  // peak the arrivals' against the bucket a queue is to them).
  std::optional<QueueAudit> queue;
  // --contract concurrency: the most admissions surely (and possibly) in progress at once
  // (contract.worst and peak then hold the sure count against the cap).
  std::optional<ConcurrencyAudit> concurrency;
  // --contract slow-down: each request's delay against what its position allows.
  std::optional<SlowDownAudit> slow_down;
  // Several contracts: each part's audit, in the order given (empty for one contract).
  std::vector<PartAudit> parts;
  // --cost: the audits counted units; the units of the allowed and denied requests.
  bool weighted = false;
  int64_t allowed_units = 0;
  int64_t denied_units = 0;
  // Whether the share a replay of the requests gives (utilisation) says anything: not when a
  // group's allowance is shared, the audits count units, or a part may count denials.
  bool share_judged = true;
  // The units responses said were left, against the first sliding part counting units.
  RemainingUnits remaining_units;
  // --contract ban: the bans proved and the admissions during them (its lock-outs and hints are
  // `lockouts` and `retry_accuracy`).
  std::optional<BanAudit> ban;
};

// How a run is audited: the contract, the identities it is audited per, the retry bounds.
struct AuditParams {
  AdmissionRule rule;
  int64_t identities = 1;
  int64_t max_retry_after_ms = 60'000;
  AccuracyTolerance tolerance;
  bool timeline = false;  // also bin the run for the HTML report
  // The limiter surely started the run empty (a fresh key, --reset, --exact): lock-outs are
  // judged from the first request, not only once state from before the run is forgotten.
  bool fresh_state = false;
  // --contract queue: how many may wait (the rule is the bucket arrivals see: B + 1 at R).
  std::optional<int64_t> queue_depth;
  int64_t queue_nodelay = 0;  // --nodelay: how many excess requests leave at once
  // --contract slow-down: the delays it promises (the rule is then only a stand-in).
  std::optional<SlowDownRule> slow_down;
  // --contract concurrency: the cap and the hold floor (the rule is then only a stand-in).
  std::optional<ConcurrencyRule> concurrency;
  // --clock-skew: how many offsets the records' clock_skew indexes (0: none given); the worst
  // span's admissions are tallied by them (ContractAudit::worst_by_skew).
  size_t clock_skews = 0;
  // The window indices limiters named came from the clients' own (skewed) clocks: every
  // record's is dropped, and fixed windows are placed on rlcheck's clock like a script's.
  bool own_clock_windows = false;
  // Several contracts (--contract repeated, or a group: part): every part, in the order given;
  // `rule` is then the first's. Empty: `rule` alone.
  std::vector<ContractPart> parts;
  int64_t group_size = 0;  // --group-size (0: one group of every identity)
  // --cost: requests cost units; every admission counts its cost (audited as parts are).
  bool weighted = false;
  // --contract ban: `rule` is its window, and more than its limit bans for this long.
  std::optional<BanRule> ban;
};

// The audits of a run against `audit.rule`, written into `stats` (contract, peak, utilisation,
// lock-outs, retry accuracy, send span, memory); `records` end up ordered by identity, and
// admissions without a fixed-window index get the wall clock's. Returns each identity's view.
// `slow_down_promises`, when given, gets a slow-down's promise to each admission (the timeline's).
IdentityRecords audit_run(RunStats& stats, engine::RecordLog& records, int64_t start_wall_ns,
                          const AuditParams& audit, SlowDownPromises* slow_down_promises = nullptr);

// rlcheck redis --release-script: a lease is held from its acquire (between the admission's
// send and reply) until its release ran (before the release's reply), so each admission's
// reply is read as its release's reply, and as the run's end where none came (an error reply,
// a lost connection: its place may have stayed taken); never less than `hold_ns` after the
// acquire's reply (when its release left). `lease_ends`: (seq, ns from the start line,
// INT64_MAX: none came).
void place_leases(engine::RecordLog& records,
                  const std::vector<std::pair<uint64_t, int64_t>>& lease_ends, int64_t hold_ns);

// Also prepares `result` for the audits: its records end up ordered by identity (by seq within
// one), and admissions without a fixed-window index get the wall clock's. `faults` (--fault:
// what was applied during this run) become the stats' faults, measured against its records.
RunStats summarize_run(int run, engine::RunResult& result, const AuditParams& audit,
                       std::vector<FaultWindow> faults = {});
// Clocks known only to within `ns` (a limiter clock's drift, many hosts' offsets): added to the
// rule's clock allowance and, in whole ms up, to the hints' tolerance.
void allow_clock_uncertainty(AuditParams& audit, int64_t ns);

// The figures of a run that do not come from its records (durations, latency, lateness,
// stages, samples); summarize_run and the streaming audit add what the records say.
RunStats summarize_measures(int run, const engine::RunResult& result);
// Counts one record: requests, outcomes, statuses, hints, advertised headers, error kinds.
void tally_record(RunStats& stats, const engine::RequestRecord& record, int64_t max_retry_after_ms);
// After the last record: what depends on the whole run (hints missing from silent denials).
void finish_tally(RunStats& stats);

// --hint-resolution over every run of a test, before any is judged: `seconds` judges the hints
// finer than a second as whole seconds; `auto_detect` does so when every such hint of every run
// was a multiple of 1000 ms; `milliseconds` keeps each hint at the unit its reply carries.
// True when some run's hints were judged again as whole seconds.
bool settle_hint_resolution(std::vector<RunStats>& runs, config::HintResolution mode,
                            const AccuracyTolerance& tolerance);

}  // namespace rlcheck::checks
