#include "cli/option_groups.hpp"

#include <fmt/format.h>

namespace rlcheck::cli {

// Every placeholder a template expands (engine/placeholder_template.hpp): --arg, and the URL,
// headers and body of an HTTP request.
const char* const k_placeholders =
    "{limit} {window_ms} {window_s} {uuid} {seq} {run} {id} {group} {cost} {now_ms} {now_s}";

void add_output_options(CLI::App* app, RawOptions& raw) {
  app->add_flag("--json", raw.json, "print the JSON report on stdout instead of the human one");
  app->add_option("--report", raw.report_path, "also write the JSON report to FILE");
  app->add_option("--junit", raw.junit_path,
                  "also write a JUnit XML report to FILE: a testcase per judged check, timed "
                  "with its share of the runs' time");
  app->add_flag("--junit-skipped", raw.junit_skipped,
                "with --junit, also list the skipped checks (as <skipped/> testcases)");
  app->add_option("--summary-md", raw.summary_md,
                  "also write a Markdown summary for pull requests to FILE; auto: append it to "
                  "$GITHUB_STEP_SUMMARY when that is set (else nothing)");
  app->add_option("--html", raw.html_path,
                  "also write a self-contained HTML timeline (inline SVG) to FILE");
  app->add_flag(
      "--hook", raw.hook,
      "Claude Code Stop-hook mode: silent on pass, reason on stderr and exit 2 on failure");
  optional_option(app, "--hook-max-blocks", raw.hook_max_blocks,
                  "with --hook, stop blocking after N consecutive blocks of one session: exit 0 "
                  "with a note naming the last failure (default: no cap)");
  app->add_flag("-q,--quiet", raw.quiet, "verdict line only");
  app->add_option("--color", raw.color, "auto, always or never (auto honours NO_COLOR and TTY)");
}

// Which command the load options are for: each help line names that command's default.

namespace {

// The defaults build_config gives, as each help line ends "(default...)": http (and compare
// --url) runs once and reads the limit and window the endpoint advertises.
struct LoadDefaults {
  const char* runs;
  const char* limit;
  const char* window;
};

LoadDefaults load_defaults(LoadCommand command) {
  switch (command) {
    case LoadCommand::advertised:
      return {" 1", ": the advertised one", ": the advertised one"};
    case LoadCommand::compare:
      return {" 4; 1 with --url", " 10; with --url: the advertised one",
              " 60s; with --url: the advertised one"};
    case LoadCommand::configured:
      break;
  }
  return {" 4", " 10", " 60s"};
}

void add_common_options(CLI::App* app, RawOptions& raw, LoadCommand command) {
  const LoadDefaults defaults = load_defaults(command);
  optional_option(app, "-n,--requests", raw.requests, "requests per run (default 200)");
  app->add_option("-p,--concurrency", raw.concurrency,
                  "requests in flight at once, one connection each (default 50)");
  optional_option(
      app, "-r,--runs", raw.runs,
      fmt::format("repeated runs, each from a fresh limiter state (default{})", defaults.runs));
  optional_option(app, "-l,--limit", raw.limit,
                  fmt::format("the limit being verified (default{})", defaults.limit));
  app->add_option_function<std::string>(
      "-w,--window",
      [&raw](const std::string& value) {
        raw.window = value;
        raw.window_given = true;
      },
      fmt::format("window length: 60s, 500ms, 1m, 1h (default{})", defaults.window));
  app->add_flag("--exact", raw.exact,
                "also fail when a run allows fewer than min(limit, requests)");
  app->add_option("--timeout", raw.timeout, "per-request timeout (default 5s)");
  app->add_option("--max-errors", raw.max_errors,
                  "errored requests tolerated per run before the verdict is error (default 0)");
  optional_option(app, "--max-retry-after", raw.max_retry_after,
                  "largest acceptable retry hint (default: the window)");
  add_output_options(app, raw);
  app->add_option("--records", raw.records_path,
                  "also write one line per request to FILE: JSON lines, or CSV when FILE ends in "
                  ".csv");
  optional_option(app, "--seed", raw.seed, "seed for generated ids, so runs can be reproduced");
  app->add_option("--threads", raw.threads, "worker threads, one event loop each (default 1)");
  optional_option(app, "--interval", raw.interval,
                  "pace requests: one every DUR, at most --concurrency in flight");
  optional_option(app, "--start-before-boundary", raw.start_before_boundary,
                  "start the run DUR before a window boundary of the wall clock (where fixed "
                  "windows turn), to expose boundary bursts");
  app->add_option("--contract", raw.contracts,
                  "the promise audited over time: sliding, fixed, sliding-counter, token-bucket, "
                  "gcra, queue or concurrency (default: the strategy's own), with its parameters "
                  "or not (sliding:10/1s, fixed:1000/1d@first-hit, token-bucket:20,10/s, "
                  "concurrency:2); repeatable: an admission needs room in every one; group: "
                  "counts one over --group-size identities; ban:5/10s,60s[,renew] bans for 60s "
                  "after more than 5 in 10s (ban:fixed:...: on fixed windows); "
                  "queue:20/s,5,nodelay=2 lets 2 excess requests through undelayed; "
                  "slow-down:5/10s,100ms[,2s] delays the k-th request past 5 in 10s by "
                  "(k - 5) x 100ms (slow-down:first-hit:...: windows from the first hit)");
  optional_option(app, "--consume-on-deny", raw.consume_on_deny,
                  "with several --contract: none (the default: a denial counts nowhere) or "
                  "checked (it may still count in the parts given before the one that denied it)");
  optional_option(app, "--cost", raw.cost,
                  "what each request costs in units, N or A-B (uniform, from --seed): every "
                  "contract counts units; {cost} sends it (default 1)");
  optional_option(app, "--cost-dist", raw.cost_dist,
                  "costs drawn with weights, COST:WEIGHT,...: 1:80,10:15,100:5");
  optional_option(app, "--group-size", raw.group_size,
                  "identities per group: 0..K-1 form group 0, and so on ({group}; group: "
                  "contracts) (default: one group of all)");
  optional_option(app, "--anchor", raw.anchor,
                  "with --contract fixed or sliding-counter, where windows start: clock (each [kW, "
                  "(k+1)W) of the "
                  "limiter's clock; the default) or first-hit (at the first admission after the "
                  "previous window ended: INCR + EXPIRE on the first hit); with --contract "
                  "token-bucket --refill K/I,steps, where the ticks fall: clock (multiples of I) "
                  "or first-hit (the bucket's creation + k x I, as Symfony; needs --exact or a "
                  "fresh key); default: anywhere");
  optional_option(app, "--rate", raw.rate,
                  "open model: requests at a constant rate (40/s), whatever the replies; with "
                  "--duration");
  optional_option(app, "--duration", raw.duration, "open model: how long each run sends at --rate");
  optional_option(app, "--stages", raw.stages,
                  "open model: the rate over time instead of --rate/--duration, each stage a "
                  "linear ramp from the previous target (0 first): 30s:100/s,1m:1000/s,30s:0/s");
  optional_option(app, "--audit", raw.audit,
                  "auto (the default), batch or stream: batch keeps every record and audits the "
                  "run after it; stream audits records as they come and keeps none, so memory "
                  "stays flat (every check judged alike; no HTML timeline or contract fit); "
                  "auto streams runs of more than 10 M requests");
  optional_option(app, "--arrivals", raw.arrivals,
                  "open model: uniform (evenly spaced, the default) or poisson (random, "
                  "exponential gaps at the same mean rate)");
  app->add_flag("--find-max", raw.find_max,
                "search for the highest rate served within --slo: steps of --duration (default "
                "5s) from --rate (default 100/s), doubling until one misses, then refined");
  optional_option(app, "--slo", raw.slo,
                  "with --find-max, the latency objective of every step: p99<10ms[,p50<2ms]");
  app->add_flag(
      "--virtual-clock", raw.virtual_clock,
      "{now_ms}/{now_s} and the schedule (--rate/--duration, --stages, --interval) on a "
      "virtual clock: requests leave as fast as each identity's order allows, so hours of a "
      "limiter that takes now as an argument are audited in seconds");
  app->add_option("--identities", raw.identities,
                  "spread the load over K identities (key suffix, {id} placeholder); every check "
                  "applies per identity (default 1)");
  optional_option(app, "--identity-dist", raw.identity_dist,
                  "how requests spread over the identities: uniform (round robin; the default), "
                  "zipf:S (identity k gets a share proportional to 1/(k+1)^S) or hot:P (identity "
                  "0 gets the share P, the others the rest evenly); drawn from --seed");
  app->add_flag("--verify-retry-after", raw.verify_retry_after,
                "after the run, wait what a denied identity was told and retry once: it must be "
                "allowed");
  optional_option(app, "--burst", raw.burst,
                  "token-bucket / gcra capacity, of the strategy and the contract (default: the "
                  "limit)");
  optional_option(app, "--refill", raw.refill,
                  "token-bucket / gcra refill rate, e.g. 5/s, and a queue's rate (default: limit "
                  "per window); --contract token-bucket: 5/1s,steps adds 5 tokens at each 1s "
                  "tick, none between (judged under every placement of the ticks)");
  optional_option(app, "--queue", raw.queue,
                  "with --contract queue: how many requests may wait their turn (default: the "
                  "limit)");
  optional_option(app, "--nodelay", raw.nodelay,
                  "with --contract queue: how many excess requests leave at once before the rest "
                  "wait, as nginx's limit_req burst=B delay=K (default: 0)");
  optional_option(app, "--hold", raw.hold,
                  "with --contract concurrency: the least time the endpoint holds each admitted "
                  "request before it replies (default: measured, the fastest admission less a "
                  "denial's latency, less a tenth)");
}

}  // namespace

// redis and compare: the unit a limiter's retry hints are judged in.
void add_hint_resolution_option(CLI::App* app, RawOptions& raw) {
  optional_option(app, "--hint-resolution", raw.hint_resolution,
                  "the unit retry hints are judged in: 1ms, 1s, or auto (whole seconds when every "
                  "hint is a multiple of 1000ms) (default auto)");
}

// Many hosts: one test shared by N copies of the command line (worker_options.cpp checks them).
void add_worker_options(CLI::App* app, RawOptions& raw) {
  optional_option(app, "--workers", raw.workers,
                  "share the test among N processes on any hosts (env RLCHECK_WORKERS; "
                  "default 1: alone)");
  optional_option(app, "--worker-index", raw.worker_index,
                  "this process's index K, 0 <= K < N (env RLCHECK_WORKER_INDEX, else "
                  "JOB_COMPLETION_INDEX)");
  optional_option(app, "--coordinator", raw.coordinator,
                  "the Redis the workers meet on: redis://, rediss://, unix:// (env "
                  "RLCHECK_COORDINATOR)");
  optional_option(app, "--session", raw.session,
                  "the shared test's name, new for every test (env RLCHECK_SESSION)");
  optional_option(app, "--join-timeout", raw.join_timeout,
                  "how long to wait for every worker to join (default 60s)");
}

// redis, compare and http: watching the runs as they go.
void add_observe_options(CLI::App* app, RawOptions& raw) {
  optional_option(app, "--progress-interval", raw.progress_interval,
                  "when stderr is not a terminal, a status line every DUR (0: none; default 10s "
                  "for runs planned over 30s, from 30s in when the span is unknown)");
  optional_option(app, "--metrics-listen", raw.metrics_listen,
                  "serve live metrics (Prometheus, OpenMetrics) at http://ADDR/metrics: "
                  "HOST:PORT, [IPV6]:PORT; port 0 picks one and says which");
  optional_option(app, "--metrics-linger", raw.metrics_linger,
                  "with --metrics-listen, keep serving DUR after the report (with the checks' "
                  "statuses); Ctrl-C ends it (default 0)");
}

// http and redis (and compare): where the load's connections leave from.
void add_source_address_option(CLI::App* app, RawOptions& raw) {
  optional_option(app, "--source-address", raw.source_address,
                  "local addresses to send from: 127.0.0.1-127.0.0.8, 10.0.0.5,10.0.0.6 (http: "
                  "identity j from address j mod count, for limiters keyed by client IP; redis: "
                  "connection c from address c mod count)");
}

void add_redis_options(CLI::App* app, RawOptions& raw) {
  optional_option(app, "--redis", raw.redis_url,
                  "redis://[user:pass@]host:port[/db], rediss:// (TLS) or unix:///path (default "
                  "$REDIS_URL, else 127.0.0.1:6379, else a private redis-server)");
  app->add_option("-s,--strategy", raw.strategy,
                  "naive, incr-expire, fixed-window, sliding-window (lua), token-bucket, gcra, "
                  "sliding-counter "
                  "(default lua)");
  app->add_option("--script", raw.scripts,
                  "your own limiter script (FILE.lua) instead of a strategy; compare: "
                  "repeatable, each with the --arg values that follow it");
  app->add_option(
      "--arg", raw.args,
      fmt::format("ARGV entry for --script, repeatable; placeholders {}", k_placeholders));
  optional_option(app, "--reply", raw.reply,
                  "the reply shape of --script: contract ({allowed, remaining, retry_ms}), counter "
                  "({hits, ttl_ms}), cell (CL.THROTTLE's), rate (redis_rate's) or count (a hit "
                  "count, allowed while <= --limit) (default contract)");
  optional_option(app, "--script-keys", raw.script_keys,
                  "KEYS passed to --script: <key>:0 ... <key>:K-1, one hash tag (default 1: the "
                  "key)");
  optional_option(app, "-k,--key", raw.key,
                  "limiter key (default: a fresh key per run under rlcheck:<id>:, deleted after)");
  app->add_flag("--reset", raw.reset, "DEL the explicit --key before each run");
}

void add_http_options(CLI::App* app, RawOptions& raw) {
  app->add_option("-X,--method", raw.method, "HTTP method (default GET)");
  app->add_option(
      "-H,--header", raw.headers,
      fmt::format("request header 'Name: value', repeatable; placeholders {}", k_placeholders));
  optional_option(app, "-d,--data", raw.data,
                  fmt::format("request body; @file reads a file; placeholders {}", k_placeholders));
  app->add_option("--allowed-status", raw.allowed_status,
                  "statuses counted as allowed (default 200-299)");
  app->add_option("--denied-status", raw.denied_status, "statuses counted as denied (default 429)");
  optional_option(app, "--between-runs", raw.between_runs, "pause between runs (e.g. one window)");
  app->add_option("--reset-cmd", raw.reset_cmd, "shell command run before each run");
  app->add_flag("--no-require-retry-after", raw.no_require_retry_after,
                "a denial without Retry-After is not a failure");
  optional_option(app, "--ratelimit-headers", raw.ratelimit_headers,
                  "which rate-limit headers are read: auto (every form, the default), ietf "
                  "(RateLimit, RateLimit-Policy), x (X-RateLimit-*) or llm "
                  "(x-ratelimit-{limit,remaining,reset}-{requests,tokens})");
  optional_option(app, "--http-client", raw.http_client,
                  "native (HTTP/1.1, the default) or curl (also used for --http2 and proxies); "
                  "default from env RLCHECK_HTTP_CLIENT");
  app->add_flag("--http2", raw.http2, "speak HTTP/2 (through curl)");
}

// For rediss:// and https:// targets.
void add_tls_options(CLI::App* app, RawOptions& raw) {
  optional_option(app, "--tls-ca", raw.tls_ca,
                  "CA bundle that verifies the server, redis and http (default: the system "
                  "store)");
  optional_option(app, "--tls-cert", raw.tls_cert,
                  "client certificate, with --tls-key (servers with tls-auth-clients yes)");
  optional_option(app, "--tls-key", raw.tls_key, "the client certificate's private key");
  optional_option(app, "--tls-sni", raw.tls_sni,
                  "server name sent and verified, redis only (default: the URL's host)");
  app->add_flag("--insecure", raw.insecure,
                "skip certificate verification, redis and http (default off)");
}

void add_cluster_options(CLI::App* app, RawOptions& raw) {
  app->add_flag("--cluster", raw.cluster,
                "require Redis Cluster (exit 3 when the server is not one); cluster mode is "
                "otherwise detected at connect");
  optional_option(app, "--embedded-cluster", raw.embedded_cluster,
                  "start a private N-master Redis Cluster on loopback (temp dir, stopped at exit) "
                  "and test against it (1-16)");
}

void add_pipeline_option(CLI::App* app, RawOptions& raw) {
  optional_option(app, "--pipeline", raw.pipeline,
                  "up to D requests in flight per connection, P connections x D (default 1)");
}

// Faults during every run, and what the limiter must do through them.
void add_fault_options(CLI::App* app, RawOptions& raw, bool behind) {
  app->add_option("--fault", raw.faults,
                  "act on the limiter's Redis at T into every run, repeatable: pause@T+D, "
                  "kill-clients@T, flush-scripts@T, restart@T (the private redis-server), "
                  "failover@T (a cluster with replicas), shell@T:CMD");
  if (behind) {
    optional_option(app, "--limiter-redis", raw.limiter_redis,
                    "the Redis behind the endpoint, that --fault acts on (redis://, rediss://, "
                    "unix://)");
  }
  optional_option(app, "--expect-fail-mode", raw.expect_fail_mode,
                  "open or closed: what the limiter must answer while a --fault lasts (open: "
                  "allow, closed: deny)");
  optional_option(app, "--recovery", raw.recovery,
                  "after a --fault ends, the longest the limiter may take to decide normally "
                  "again (default 1s)");
}

// How far client clocks are off, and (redis, compare) where a built-in reads the time.
void add_clock_options(CLI::App* app, RawOptions& raw, bool time_source) {
  optional_option(app, "--clock-skew", raw.clock_skew,
                  "offsets of the clients' clocks, e.g. 0,+500ms,-250ms: connection c (worker k "
                  "on many hosts) reads {now_ms}/{now_s} offset c mod count; judged on rlcheck's "
                  "clock");
  if (time_source) {
    optional_option(app, "--time-source", raw.time_source,
                    "where a built-in strategy reads now: redis (TIME, the default) or client "
                    "({now_ms} passed as an argument); compare: a list, e.g. redis,client");
  }
}

void add_serve_options(CLI::App* serve, RawOptions& raw) {
  serve->add_option("--listen", raw.listen, "ADDR:PORT to listen on (default 127.0.0.1:8080)");
  optional_option(serve, "--redis", raw.redis_url,
                  "redis://host:port, rediss:// (TLS) or unix:///path (default $REDIS_URL, "
                  "127.0.0.1:6379, else a private redis-server)");
  serve->add_option("-s,--strategy", raw.strategy, "limiter strategy (default lua)");
  serve->add_option("--script", raw.scripts,
                    "your own limiter script (FILE.lua) instead of a strategy");
  optional_option(serve, "-l,--limit", raw.limit, "requests allowed per window (default 10)");
  serve->add_option("-w,--window", raw.window, "window length (default 60s)");
  optional_option(serve, "--burst", raw.burst, "token-bucket / gcra capacity");
  optional_option(serve, "--refill", raw.refill,
                  "token-bucket / gcra refill rate, leaky-queue rate");
  optional_option(serve, "--queue", raw.queue,
                  "leaky-queue: how many requests may wait their turn (default: the limit)");
  optional_option(serve, "--hold", raw.hold,
                  "concurrency: how long each admitted request is held before its reply (its "
                  "place, up to --limit at once, is released once the reply is sent)");
  serve->add_option("--identity-header", raw.identity_header,
                    "header naming the client (default: the client address)");
  serve->add_option("--cost-header", raw.cost_header,
                    "header holding a request's cost in units (every strategy but leaky-queue and "
                    "concurrency; "
                    "default: 1 each)");
  serve->add_flag("--fail-closed", raw.fail_closed, "answer 503 while Redis is down (default)");
  serve->add_flag("--fail-open", raw.fail_open, "let requests through while Redis is down");
  serve->add_option("--timeout", raw.timeout, "Redis decision timeout (default 5s)");
}

// The http and redis option sets, less what only repeated runs need, and the limiter's
// parameters (for --strategy), the budget and the JSON output.
void add_probe_options(CLI::App* probe, RawOptions& raw) {
  probe->add_option("URL", raw.url,
                    "an HTTP endpoint, with {run} where the limiter reads the identity (default: "
                    "the Redis limiter of --strategy or --script)");
  add_http_options(probe, raw);
  add_redis_options(probe, raw);
  for (const char* name :
       {"--between-runs", "--reset-cmd", "--no-require-retry-after", "--key", "--reset"}) {
    probe->remove_option(probe->get_option(name));
  }
  optional_option(probe, "-l,--limit", raw.limit, "--strategy: its limit (default 10)");
  probe->add_option("-w,--window", raw.window, "--strategy: its window (default 60s)");
  optional_option(probe, "--burst", raw.burst, "--strategy: token-bucket / gcra capacity");
  optional_option(probe, "--refill", raw.refill, "--strategy: token-bucket / gcra refill rate");
  optional_option(probe, "--cost", raw.cost,
                  "units each request costs, one N throughout; {cost} sends it, and the limits "
                  "are reported in units");
  probe->add_option("--max-time", raw.max_time,
                    "give up (exit 3) when it cannot tell within DUR (default 60s)");
  probe->add_option("--timeout", raw.timeout, "per-request timeout (default 5s)");
  optional_option(probe, "--seed", raw.seed, "seed for generated ids");
  probe->add_flag("--virtual-clock", raw.virtual_clock,
                  "tell the limiter virtual instants ({now_ms}/{now_s}): windows of hours are "
                  "probed in seconds");
  probe->add_flag("--json", raw.json, "print rlcheck.probe/v1 JSON instead of the human report");
  probe->add_flag("-q,--quiet", raw.quiet, "the result line only");
}

// What every load command takes: the load and its checks, what it reports, where it sends from.
void add_load_options(CLI::App* command, RawOptions& raw, LoadCommand kind) {
  add_common_options(command, raw, kind);
  add_observe_options(command, raw);
  add_source_address_option(command, raw);
}

// How a command reaches a Redis limiter: cluster, pipeline, TLS, faults, clocks.
void add_redis_connection_options(CLI::App* command, RawOptions& raw) {
  add_cluster_options(command, raw);
  add_pipeline_option(command, raw);
  add_tls_options(command, raw);
  add_fault_options(command, raw, false);
  add_clock_options(command, raw, true);
}

}  // namespace rlcheck::cli
