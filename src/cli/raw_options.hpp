#pragma once
// Flags as typed, before validation. CLI11 fills this; build_config() turns it into a Config
// or a usage error that names the flag.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace rlcheck::cli {

struct RawOptions {
  config::Command command = config::Command::drive;
  std::string kind;  // the target kind whose command was typed (Command::drive)
  // A kind's own options as typed, made and read by that kind (targets/<kind>/).
  std::map<std::string, std::shared_ptr<void>, std::less<>> kind_raw;
  std::optional<int64_t> requests;
  int64_t concurrency = 50;
  std::optional<int64_t> runs;
  std::optional<int64_t> limit;
  std::string window = "60s";
  bool window_given = false;  // -w/--window was typed (serve ignores it)
  bool exact = false;
  std::string timeout = "5s";
  int64_t max_errors = 0;
  std::optional<std::string> max_retry_after;
  bool json = false;
  std::string report_path;
  bool hook = false;
  std::optional<int64_t> hook_max_blocks;
  bool quiet = false;
  std::string color = "auto";
  std::optional<std::string> seed;
  int64_t threads = 1;
  std::optional<std::string> interval;
  std::optional<std::string> start_before_boundary;
  std::vector<std::string> contracts;            // --contract, repeatable
  std::optional<std::string> consume_on_deny;    // --consume-on-deny none|checked
  std::optional<int64_t> group_size;             // --group-size K
  std::optional<std::string> cost;               // --cost N | A-B
  std::optional<std::string> cost_dist;          // --cost-dist COST:WEIGHT,...
  std::optional<std::string> ratelimit_headers;  // --ratelimit-headers auto|ietf|x|llm
  std::string cost_header;                       // serve --cost-header NAME
  std::optional<std::string> anchor;             // --anchor clock|first-hit
  std::optional<std::string> rate;
  std::optional<std::string> duration;
  std::optional<std::string> stages;    // --stages LIST
  std::optional<std::string> arrivals;  // --arrivals uniform|poisson
  bool find_max = false;                // --find-max
  std::optional<std::string> slo;       // --slo LIST
  int64_t identities = 1;
  std::optional<std::string> identity_dist;   // --identity-dist uniform|zipf:S|hot:P
  std::optional<std::string> audit;           // --audit auto|batch|stream
  std::optional<std::string> source_address;  // --source-address LIST
  // Many hosts (redis, http); each also from the environment (worker_options.cpp).
  std::optional<int64_t> workers;
  std::optional<int64_t> worker_index;
  std::optional<std::string> coordinator;
  std::optional<std::string> session;
  std::optional<std::string> join_timeout;
  bool verify_retry_after = false;
  std::string html_path;
  std::string records_path;

  std::optional<std::string> redis_url;
  std::string strategy = "lua";
  // --script, as typed (repeatable for compare); `script` is the one of the other commands, and
  // each compared script comes with its own --arg values (take_script_args, command_line.cpp).
  std::vector<std::string> scripts;
  std::optional<std::string> script;
  std::vector<config::CompareScript> compare_scripts;
  std::vector<std::string> args;
  std::optional<std::string> reply;            // --reply FORMAT
  std::optional<int64_t> script_keys;          // --script-keys K
  std::optional<std::string> hint_resolution;  // --hint-resolution auto|1ms|1s
  std::optional<std::string> key;
  bool reset = false;
  std::optional<int64_t> burst;
  std::optional<std::string> refill;
  std::optional<int64_t> queue;
  std::optional<int64_t> nodelay;             // --nodelay K
  std::optional<std::string> hold;            // --hold DUR
  std::optional<std::string> release_script;  // redis --release-script FILE
  std::string strategies = "naive,lua";
  bool strategies_given = false;
  bool cluster = false;                     // --cluster
  std::optional<int64_t> embedded_cluster;  // --embedded-cluster N
  std::optional<int64_t> pipeline;          // --pipeline D

  std::string url;                        // http URL (positional)
  std::vector<std::string> compare_urls;  // compare --url, repeatable
  std::string method = "GET";
  std::vector<std::string> headers;
  std::optional<std::string> data;
  std::string allowed_status = "200-299";
  std::string denied_status = "429";
  std::optional<std::string> between_runs;
  std::string reset_cmd;
  bool no_require_retry_after = false;
  std::optional<std::string> http_client;  // --http-client, or RLCHECK_HTTP_CLIENT
  bool http2 = false;

  // TLS for rediss:// and https:// targets.
  std::optional<std::string> tls_ca;
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::optional<std::string> tls_sni;
  bool insecure = false;

  bool show_version = false;
  std::string junit_path;
  bool junit_skipped = false;               // --junit-skipped
  std::string summary_md;                   // --summary-md FILE|auto
  std::vector<std::string> scenario_paths;  // run
  std::vector<std::string> hook_args;       // hook-config, after --
  std::optional<std::string> merge_settings;
  std::string explain_id;  // explain CHECK_ID

  std::string listen = "127.0.0.1:8080";
  std::string identity_header;
  bool fail_open = false;
  bool fail_closed = false;

  std::string max_time = "60s";  // probe

  bool virtual_clock = false;  // --virtual-clock (redis --script, http with {now_ms}, probe)

  // Faults during every run (redis, http, compare).
  std::vector<std::string> faults;              // --fault SPEC, repeatable
  std::optional<std::string> limiter_redis;     // --limiter-redis URL (http)
  std::optional<std::string> expect_fail_mode;  // --expect-fail-mode open|closed
  std::optional<std::string> recovery;          // --recovery DUR

  std::optional<std::string> clock_skew;   // --clock-skew LIST (redis, http, compare)
  std::optional<std::string> time_source;  // --time-source redis|client (compare: a list)

  std::optional<std::string> progress_interval;  // --progress-interval DUR
  std::optional<std::string> metrics_listen;     // --metrics-listen ADDR
  std::optional<std::string> metrics_linger;     // --metrics-linger DUR
};

// Checks every value and cross-flag rule; throws FatalError(usage) with one line that names
// the flag, e.g. "--requests: must be at least 1, got 0".
config::Config build_config(const RawOptions& raw);
// The Redis and HTTP kinds' parts of build_config (their KindCommand::fill), after the part
// every kind shares: the limiter and its Redis (compare's strategies, serve), or the request.
void fill_redis_kind(const RawOptions& raw, config::Config& config);
void fill_http_kind(const RawOptions& raw, config::Config& config);

// Parts of build_config (http_options.cpp): the HTTP request and run rules, and serve.
void fill_http(const RawOptions& raw, config::Config& config);
void fill_serve(const RawOptions& raw, config::Config& config);
// rlcheck probe (probe_options.cpp): --max-time and what an HTTP probe needs.
void fill_probe(const RawOptions& raw, config::Config& config);
// skew_options.cpp: --clock-skew and --time-source, after the strategy (and compare's
// strategies) are known; `http` as for fill_tls.
void fill_clock(const RawOptions& raw, bool http, config::Config& config);
// tls_options.cpp: --tls-* and --insecure, checked against the target they would apply to:
// with `http`, the HTTP endpoints (config.http.urls, filled before); else the Redis URL
// (--redis, else $REDIS_URL).
void fill_tls(const RawOptions& raw, bool http, config::Config& config);
// The first TLS flag typed (--tls-ca, ...), to name in a refusal that concerns them all; null
// when none.
const char* first_tls_flag(const RawOptions& raw);
// fill_tls once the target is known to take TLS: the files read, --tls-sni, --insecure.
void fill_tls_files(const RawOptions& raw, config::Config& config);
// fault_options.cpp: --fault, --limiter-redis, --expect-fail-mode and --recovery, with `http`
// as for fill_tls (the Redis the faults act on is then --limiter-redis).
void fill_faults(const RawOptions& raw, bool http, config::Config& config);
// worker_options.cpp: --workers, --worker-index, --coordinator, --session, --join-timeout and
// their environment forms (redis and http only), and what sharing a test rules out.
void fill_workers(const RawOptions& raw, config::Config& config);
// observe_options.cpp: --progress-interval, --metrics-listen and --metrics-linger.
void fill_observe(const RawOptions& raw, config::Config& config);
// clock_options.cpp: --virtual-clock, checked against everything else filled before: the
// target must take now as an argument, and the load must have a schedule to make virtual.
void fill_virtual_clock(const RawOptions& raw, bool http, config::Config& config);
// The same for a kind told the time in the texts `told` of its requests ({now_ms}, {now_s});
// `where` says where to put it ("in --data or --metadata").
void fill_virtual_clock_told(const RawOptions& raw, const std::vector<std::string>& told,
                             std::string_view where, config::Config& config);
// contract_options.cpp: --contract, read where --contract's single name was (after --limit and
// --window): one spec with parameters sets them as the flags would (a flag that disagrees is an
// error); several (or a group: part) become checks.parts. Returns the one contract's name.
std::optional<std::string> read_contracts(const RawOptions& raw, config::CheckConfig& checks);
// After --burst, --refill and --queue: the parts' parameters the specs left to the flags,
// --consume-on-deny and --group-size.
void resolve_contract_parts(const RawOptions& raw, config::Config& config);
// After those and --seed: --cost and --cost-dist, against the contracts that count units.
void fill_costs(const RawOptions& raw, config::Config& config);
// After the strategy (and compare's) are known: the built-in strategies count one unit a
// request, so --cost goes to a --script (with {cost} in its --arg) or an HTTP endpoint.
void refuse_costs_for_strategies(const config::Config& config);
// audit_options.cpp: --audit, once everything it depends on is filled.
void fill_audit(const RawOptions& raw, bool http, config::Config& config);
// find_max_options.cpp: --find-max and --slo (in place of the open model's --rate/--duration,
// which give the first step), after the faults and workers are known.
void fill_find_max(const RawOptions& raw, config::Config& config);

}  // namespace rlcheck::cli
