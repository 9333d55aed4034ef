#pragma once
// Plain configuration filled by the command line (cli/) and read by everything else.
// Every field has its default here; units are in the names or the comments.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/contract_spec.hpp"
#include "config/cost_plan.hpp"
#include "config/duration.hpp"
#include "config/fault_spec.hpp"
#include "config/identity_dist.hpp"
#include "config/listen_address.hpp"
#include "config/rate.hpp"
#include "config/slo.hpp"

namespace rlcheck::config {

// --redis embedded: always the private redis-server, even when 127.0.0.1:6379 or $REDIS_URL
// would answer (a test of restart@, say, must not touch a shared server).
inline constexpr std::string_view k_embedded_url = "embedded";

using namespace std::chrono_literals;

// `drive`: the command of a target kind (`rlcheck redis`, `rlcheck http`, ...), which
// Config::kind names.
enum class Command { drive, compare, serve, run, hook_config, probe, explain };

enum class Strategy {
  naive,
  incr_expire,
  fixed_window,
  sliding_window,
  token_bucket,
  gcra,
  sliding_counter,
  fixed_first_hit,  // INCR + PEXPIRE on the first hit, in one script (incr-expire done right)
  leaky_queue,      // serve only: admitted requests wait their turn, denied past the queue
  concurrency,      // serve only: a semaphore with leases, held --hold and released on reply
  script
};

enum class ColorMode { auto_detect, always, never };

// --stages: one stage of the open model's plan. The rate ramps linearly from the previous
// stage's target (0 before the first) to `to_per_s` over `duration`, as k6's
// ramping-arrival-rate does; a stage of length 0 jumps to its target, one from 0 to 0 pauses.
struct Stage {
  std::chrono::nanoseconds duration{0};
  double to_per_s = 0;
};

// --arrivals: how the open model spaces its requests. uniform: evenly, at the planned rate;
// poisson: at random (exponential gaps) at the same mean rate, conditioned on the planned count.
enum class Arrivals { uniform, poisson };

// --time-source: where a built-in strategy's script reads `now`.
enum class TimeSource {
  redis,   // Redis TIME: one clock for every client (the default)
  client,  // an argument ({now_ms}) from the client's clock, as scripts that trust app servers do
};

// The reply shape of a --script (--reply): rlcheck's own contract, or what a library ships.
enum class ReplyFormat {
  contract,  // 1, 0 or {allowed, remaining, retry_ms}
  counter,   // {hits, ttl_ms}: INCR + PEXPIRE stores (express-rate-limit, rate-limiter-flexible)
  cell,      // {limited, limit, remaining, retry_after_s, reset_after_s}: CL.THROTTLE
  rate,      // {allowed, remaining, retry_after, reset_after}: go-redis redis_rate, seconds
  count,     // a bare hit count: allowed while it is at most the limit
};

// --hint-resolution: the unit retry hints are judged in (retry-after-accuracy's tolerance).
enum class HintResolution {
  auto_detect,   // whole seconds when every hint of the test is a multiple of 1000 ms, else
                 // the unit the reply carries
  milliseconds,  // the unit the reply carries (whole seconds stay whole seconds)
  seconds,       // whole seconds
};

// The seed of identity draws without --seed ("rlcheck" in ASCII).
inline constexpr uint64_t k_identity_seed = 0x726c636865636bULL;

struct LoadConfig {
  int64_t requests = 200;  // decisions asked per run
  int concurrency = 50;    // connections, each with at most one request in flight
  int runs = 4;            // repeated runs, each from a fresh limiter state
  int threads = 1;         // worker threads, one event loop each
  Nanos interval{0};  // 0: as fast as replies come; else request i leaves at start + i * interval
  Nanos start_before_boundary{0};  // >0: the first requests leave this long before a window
                                   // boundary of the wall clock (where fixed windows turn)
  Nanos boundary_window{0};        // the window those boundaries are multiples of
  Nanos timeout = 5s;              // per request, from send to the final reply
  // Open model (--rate, --duration): request i is due at start + i / rate whatever the replies,
  // and its latency counts from then, so a stalled target cannot hide delay. `requests` is
  // rate x duration. Unset: the closed model.
  std::optional<Rate> rate;
  // --stages: the open model's rate over time instead of --rate (requests: the planned count,
  // config/stages.hpp); empty: none.
  std::vector<Stage> stages;
  Arrivals arrivals = Arrivals::uniform;  // --arrivals (poisson: open model only)
  uint64_t schedule_seed = 0;             // the random arrivals' seed (--seed, per run)
  // The open model: requests are due on a schedule whatever the replies (--rate or --stages).
  bool open_model() const { return rate.has_value() || !stages.empty(); }
  int64_t identities = 1;  // the identities the load speaks for (--identities)
  // --group-size K: identities 0..K-1 form group 0, K..2K-1 group 1, ... ({group}, group:
  // contract parts); 0: every identity in group 0.
  int64_t group_size = 0;
  // --cost, --cost-dist: what each request costs in units (1 each unless given).
  CostPlan costs;
  // --identity-dist: which identity request i speaks for (uniform: i mod identities).
  IdentityDist identity_dist;
  // The draws of a non-uniform identity_dist: --seed when given, else k_identity_seed, so the
  // same run draws the same identities and every worker of many hosts agrees.
  uint64_t identity_seed = k_identity_seed;
  // Set: every request of the run speaks for this identity (the retry of --verify-retry-after).
  std::optional<uint32_t> only_identity;
  // --source-address: the local addresses requests leave from (empty: the system's choice).
  // http: identity j sends from address j mod count; redis: connection c binds address c mod
  // count.
  std::vector<std::string> source_addresses;
  // Set: once more requests than this have errored, no more are sent (those in flight finish
  // or time out) and the run ends early: its errors already decide the test (--max-errors).
  std::optional<int64_t> stop_after_errors;
  uint64_t first_seq = 0;  // the first request's number (a retry after the run continues it)
  // The start line is not crossed before this instant (connections are made before it).
  std::chrono::steady_clock::time_point not_before{};
  // Many hosts (--workers N): this process sends request i only when i mod share_count is
  // share_index; the others are another worker's, and not recorded here.
  uint64_t share_count = 1;
  uint64_t share_index = 0;
  // Many hosts: called once every connection is made (or failed), before the start line, on
  // one worker thread. Returns the instant the workers agreed to start at (the run waits for
  // it instead of --start-before-boundary), or nullopt: the run must not start (the session
  // ended meanwhile); RunResult::cancelled says so.
  std::function<std::optional<std::chrono::steady_clock::time_point>()> start_gate;
  // Many hosts: set (by the session's heartbeat) when the session lost a worker or was
  // interrupted elsewhere: no request leaves any more, and the run holds the ones sent.
  const std::atomic<bool>* abandon = nullptr;
  // --virtual-clock: request i reads, and is recorded at, the virtual instant
  // virtual_origin_ns + its due offset (i / rate, or i x interval) floored to a whole ms.
  // Requests leave as fast as replies come, each identity's in order, one client per identity.
  bool virtual_clock = false;
  int64_t virtual_origin_ns = 0;  // unix ns of the virtual start line; 0: the wall clock then
  // --clock-skew: the offsets client clocks are off by. Connection c (client_id /
  // clients_per_connection) adds clock_skews[c mod count]; many hosts: every connection of
  // worker k adds clock_skews[k mod count]; under the virtual clock, the n-th request of an
  // identity adds clock_skews[n mod count].
  std::vector<Nanos> clock_skews;
  int clients_per_connection = 1;  // redis --pipeline: clients sharing one connection
};

// `base` as one run of `requests` on one connection with one request in flight, on one thread:
// the serial sends of a probe, a serial rerun and a retry.
inline LoadConfig one_at_a_time(LoadConfig base, int64_t requests) {
  base.requests = requests;
  base.concurrency = 1;
  base.runs = 1;
  base.threads = 1;
  return base;
}

// --audit: batch keeps every record of a run and audits them after it; stream audits them as
// they come and keeps none (bounded memory; some audits are then not judged).
enum class AuditMode { batch, stream };
// The most requests a run may plan: kept for a batch audit, and audited as they come.
inline constexpr int64_t k_max_kept_requests = 100'000'000;
inline constexpr int64_t k_max_streamed_requests = 2'000'000'000;
// --audit auto streams runs of more requests than this (where a run can stream).
inline constexpr int64_t k_stream_above_requests = 10'000'000;

struct CheckConfig {
  int64_t limit = 10;       // admissions the limiter promises per window
  bool limit_given = true;  // false: http infers it from the responses' headers
  // The promise `limit` audits over time; unset: the strategy's own (fixed-window: aligned
  // windows; token-bucket, gcra: burst + refill; sliding-counter: two windows weighted; others
  // and http: sliding window).
  std::optional<std::string> contract;  // "sliding", "fixed", "sliding-counter", "token-bucket",
                                        // "gcra", "queue"
  // --anchor, fixed and sliding-counter only: where windows start. "clock": each [kW, (k+1)W) of
  // the limiter's clock; "first-hit": a window opens at the first admission after the previous one
  // ended (INCR + EXPIRE on the first hit). Unset: the strategy's own (incr-expire: first-hit),
  // else clock.
  std::optional<std::string> anchor;
  Nanos window = 60s;        // the limiter's window
  bool window_given = true;  // false: http infers it from the responses' headers (else 60s)
  bool exact = false;        // also fail on under-admission
  int64_t max_errors = 0;    // errored requests tolerated per run
  std::optional<Nanos> max_retry_after;  // largest acceptable retry hint; unset: the window
  // token-bucket / gcra: the contract's capacity and refill, and the built-in strategy's.
  std::optional<int64_t> burst;  // unset: the limit
  std::optional<Rate> refill;    // unset: limit per window
  // queue (--queue): how many requests may wait while one leaves at the refill rate; the
  // contract's and leaky-queue's.
  std::optional<int64_t> queue;
  // queue (--nodelay, queue:R,B,nodelay=K): how many excess requests leave at once before the
  // rest wait (nginx's limit_req delay=K); unset: none.
  std::optional<int64_t> nodelay;
  // --contract slow-down:...: a limiter that delays rather than denies (contract "slow-down").
  std::optional<SlowDown> slow_down;
  // --contract ban:...,B[,renew]: more than `limit` in the window (contract: its inner kind)
  // bans the identity for B (ContractSpec::ban).
  std::optional<Nanos> ban;
  bool ban_renews = false;
  // concurrency (--hold): the least time the endpoint holds each admitted request before it
  // replies; unset: measured from the run (checks/concurrency_audit).
  std::optional<Nanos> hold;
  // Several contracts (--contract repeated, or a group: part): every part in the order given,
  // its parameters resolved (from the flags where the spec gave none). Empty: one contract
  // (contract, limit, window, burst, refill above, which hold the first part's otherwise).
  std::vector<ContractSpec> parts;
  // --consume-on-deny checked: a denied request may still count in the parts checked before
  // the one that denied it (false: none, the strict reading).
  bool consume_on_deny = false;
  bool verify_retry_after = false;              // after the run, retry once exactly when told
  std::optional<std::string> expect_fail_mode;  // --expect-fail-mode: "open" or "closed"
  Nanos recovery = 1s;  // --recovery: the longest a limiter may take to decide normally again
  HintResolution hint_resolution = HintResolution::auto_detect;  // --hint-resolution
  AuditMode audit = AuditMode::batch;  // --audit, resolved (auto: stream for long runs)
  bool audit_given = false;            // --audit stream was asked for, not chosen by auto
};

// --fault: what happens to the limiter's Redis during every run.
struct FaultConfig {
  std::vector<FaultSpec> faults;             // in the order given
  std::optional<std::string> limiter_redis;  // --limiter-redis (http); redis: --redis
};

struct OutputConfig {
  bool json = false;           // JSON report on stdout instead of the human one
  std::string report_path;     // also write the JSON report here (empty: no)
  std::string junit_path;      // also write a JUnit XML report here (empty: no)
  bool junit_skipped = false;  // --junit-skipped: skipped checks are testcases too
  std::string html_path;       // also write the HTML timeline here (empty: no)
  std::string records_path;    // also write one line per request here (.csv, else JSON lines)
  bool hook = false;           // Claude Code Stop-hook mode
  // --summary-md: the Markdown summary's file (empty: none); with summary_md_append (auto:
  // $GITHUB_STEP_SUMMARY) appended to, else written whole.
  std::string summary_md_path;
  bool summary_md_append = false;
  // --hook-max-blocks: after this many consecutive blocks a failing hook lets the stop go
  // (exit 0, a note on stderr); unset: every failure blocks.
  std::optional<int64_t> hook_max_blocks;
  bool quiet = false;  // verdict line only
  ColorMode color = ColorMode::auto_detect;
};

// Watching the runs as they go: progress on stderr and the metrics endpoint.
struct ObserveConfig {
  // --progress-interval: a status line this often when stderr is not a terminal (0: none);
  // unset: every 10 s for runs planned over 30 s, from 30 s in for runs of unknown span.
  std::optional<Nanos> progress_interval;
  std::optional<ListenAddress> metrics_listen;  // --metrics-listen: serve /metrics there
  Nanos metrics_linger{0};  // --metrics-linger: serve this long after the report is delivered
};

// TLS for rediss:// and https:// targets.
struct TlsConfig {
  std::string ca_file;    // --tls-ca: verifies the server; empty: the system store
  std::string cert_file;  // --tls-cert: client certificate (servers that ask for one)
  std::string key_file;   // --tls-key: its private key
  std::string sni;        // --tls-sni: server name sent and verified; empty: the URL's host
  bool insecure = false;  // --insecure: skip certificate verification
};

// compare --script: one of the user's scripts compared, with the --arg values it is called with
// (named by its path in every report).
struct CompareScript {
  std::string path;
  std::vector<std::string> args;  // empty: {limit} {window_ms} {uuid}
};

struct RedisConfig {
  std::optional<std::string> url;  // --redis, else $REDIS_URL, else the embedded default
  bool require_cluster = false;    // --cluster: exit 3 unless the server is a Redis Cluster
  int embedded_cluster = 0;        // --embedded-cluster N: a private N-master cluster (0: no)
  int pipeline = 1;                // --pipeline D: requests in flight per connection
  Strategy strategy = Strategy::sliding_window;
  std::string script_path;               // --script (strategy becomes Strategy::script)
  std::vector<std::string> script_args;  // --arg templates; empty: {limit} {window_ms} {uuid}
  // --release-script: a semaphore's release, called --hold after each admission with the
  // --script's KEYS and ARGV; empty: none.
  std::string release_script_path;
  std::optional<std::string> key;  // explicit key; unset: a fresh key per run
  bool reset = false;              // DEL the explicit key before each run
  // --reply: how the --script's reply reads.
  ReplyFormat reply = ReplyFormat::contract;
  // --script-keys: the KEYS a --script gets per request (<key>:0 ... when more than 1).
  int64_t script_keys = 1;
  // --time-source: redis takes one, compare a list (each compared strategy once per source
  // that applies to it). fixed-window always reads the client's clock; naive, incr-expire and
  // fixed-first-hit read none.
  std::vector<TimeSource> time_sources{TimeSource::redis};
  bool time_source_given = false;  // the reports name the source only when it was chosen
};

// Which client sends HTTP requests (--http-client, RLCHECK_HTTP_CLIENT).
enum class HttpClientChoice {
  automatic,  // native for HTTP/1.1; curl for --http2, proxies and what native declines
  native,
  curl,
};

struct HttpConfig {
  std::vector<std::string> urls;  // http: one; compare: one per --url
  std::string method = "GET";
  std::vector<std::string> headers;        // "Name: value", with placeholders
  std::optional<std::string> body;         // --data, @file already read
  std::string allowed_status = "200-299";  // validated lists, parsed again by http/
  std::string denied_status = "429";
  Nanos between_runs{0};                   // pause before every run but the first
  std::string reset_cmd;                   // shell command run before each run
  bool require_retry_after = true;         // a 429 without Retry-After fails a check
  std::string ratelimit_headers = "auto";  // --ratelimit-headers: auto, ietf, x or llm
  HttpClientChoice client = HttpClientChoice::automatic;
  bool http2 = false;  // --http2 (curl)
};

struct ServeConfig {
  std::string listen = "127.0.0.1:8080";  // ADDR:PORT
  std::string identity_header;            // empty: the client address
  std::string cost_header;                // --cost-header: a request's cost in units; empty: 1 each
  bool fail_open = false;                 // Redis down: let requests through (else 503)
};

// rlcheck probe: the target is config.http.urls (one), else the Redis limiter of config.redis.
struct ProbeConfig {
  Nanos max_time = 60s;  // the whole probe's budget; past it, it could not tell (exit 3)
};

// Many hosts (--workers): N copies of one command line share one test through a Redis.
struct WorkersConfig {
  int count = 1;            // --workers N
  int index = 0;            // --worker-index K, 0 <= K < N
  std::string coordinator;  // --coordinator URL; empty: one process alone
  std::string session;      // --session ID
  Nanos join_timeout = 60s;
  bool distributed() const { return !coordinator.empty(); }
};

// --find-max --slo: search for the highest rate the target serves within a latency objective,
// one run a step (load.rate and load.requests are the first step's).
struct FindMaxConfig {
  bool enabled = false;
  std::vector<SloBound> slo;
  Nanos step{5'000'000'000};  // how long each step sends (--duration)
};

struct Config {
  Command command = Command::drive;
  // The kind of target the command drives (targets/target_kinds.cpp): `rlcheck KIND`, compare's
  // targets, what probe sends to.
  std::string kind = "redis";
  // A kind's own options, read only in its folder (kinds whose options fill no struct here).
  std::shared_ptr<const void> kind_options;
  bool compare_urls = false;  // compare: targets named by --url rather than strategies
  LoadConfig load;
  CheckConfig checks;
  OutputConfig output;
  ObserveConfig observe;
  RedisConfig redis;
  HttpConfig http;
  TlsConfig tls;  // redis (rediss://) and http (https://)
  FaultConfig faults;
  ServeConfig serve;
  ProbeConfig probe;
  WorkersConfig workers;
  FindMaxConfig find_max;
  std::vector<std::string> scenario_paths;    // run: files and folders
  std::vector<std::string> hook_args;         // hook-config: the rlcheck command line
  std::optional<std::string> merge_settings;  // hook-config: settings.json to merge into
  std::string explain_id;  // explain: the check whose page to print (empty: list them)
  std::vector<Strategy> compare_strategies{Strategy::naive, Strategy::sliding_window};
  std::vector<CompareScript> compare_scripts;  // compare --script, after the strategies
  std::optional<uint64_t> seed;                // unset: random
  std::vector<std::string> command_line;       // as typed, for "reproduce with" hints
};

}  // namespace rlcheck::config
