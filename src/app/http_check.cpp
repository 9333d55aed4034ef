#include "app/http_check.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include <fmt/format.h>

#include "app/advertised_params.hpp"
#include "app/contract_choice.hpp"
#include "app/contract_fit_note.hpp"
#include "app/exit_code.hpp"
#include "app/judgement.hpp"
#include "app/progress.hpp"
#include "app/retry_verification.hpp"
#include "app/shared_test.hpp"
#include "checks/checks.hpp"
#include "engine/interrupt.hpp"
#include "faults/fault_schedule.hpp"
#include "http/client_choice.hpp"
#include "http/http_client.hpp"
#include "process/child_process.hpp"
#include "redis/endpoint.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::app {
namespace {

constexpr auto k_reset_cmd_limit = std::chrono::seconds(60);

engine::PlaceholderTemplate text_template(const std::string& text) {
  // Braces that name no placeholder stay text (JSON bodies); this cannot fail.
  return *engine::PlaceholderTemplate::parse(text, engine::PlaceholderTemplate::Unknown::keep);
}

}  // namespace

http::HttpTarget make_http_target(const config::Config& config, const std::string& url,
                                  uint64_t seed) {
  const config::HttpConfig& options = config.http;
  http::HttpTarget target;
  target.method = options.method;
  target.url = text_template(url);
  for (const std::string& header : options.headers)
    target.headers.push_back(text_template(header));
  if (options.body)
    target.body = text_template(*options.body);
  target.url_text = url;
  target.header_texts = options.headers;
  target.body_text = options.body;
  auto choice = http::choose_http_client(options.client, url, options.http2, &std::getenv);
  if (!choice)
    throw usage_error(choice.error());
  target.native = choice->native;
  target.http2 = options.http2;
  target.rules.allowed = *http::StatusSet::parse(options.allowed_status);
  target.rules.denied = *http::StatusSet::parse(options.denied_status);
  target.rules.require_retry_after = options.require_retry_after;
  target.timeout = config.load.timeout;
  target.tls = config.tls;
  target.concurrency = config.load.concurrency;
  target.placeholders.limit = config.checks.limit;
  target.placeholders.window_ms = config::to_milliseconds(config.checks.window);
  target.placeholders.identities = config.load.identities;
  target.source_addresses = config.load.source_addresses;
  target.seed = seed;
  return target;
}

namespace {

// --reset-cmd, stopped (and its process group with it) when Ctrl-C comes first. False when
// interrupted.
bool run_reset_cmd(const std::string& command) {
  auto child = process::ChildProcess::spawn({"/bin/sh", "-c", command},
                                            process::ChildProcess::Stderr::inherit);
  if (!child)
    throw cannot_test(fmt::format("--reset-cmd: {}", child.error()));
  const auto deadline = std::chrono::steady_clock::now() + k_reset_cmd_limit;
  while (!engine::interrupted()) {
    if (auto status = child->wait_for(engine::k_interrupt_poll)) {
      if (*status != 0) {
        throw cannot_test(fmt::format("--reset-cmd: '{}' exited with status {}", command, *status));
      }
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw cannot_test(
          fmt::format("--reset-cmd: still running after {}s; stopped", k_reset_cmd_limit.count()));
    }
  }
  return false;  // the child is stopped as it goes out of scope
}

// The pause between runs and the reset command; false when Ctrl-C came during either.
// `reset`: whether this process runs --reset-cmd (many hosts: worker 0 alone).
bool prepare_run(const config::HttpConfig& options, int run, bool reset) {
  if (run > 1 && options.between_runs.count() > 0 &&
      !engine::wait_until(std::chrono::steady_clock::now() + options.between_runs)) {
    return false;
  }
  return !reset || options.reset_cmd.empty() || run_reset_cmd(options.reset_cmd);
}

// Reason phrases of the statuses an endpoint that cannot be tested tends to answer.
constexpr std::pair<int, std::string_view> k_reason_phrases[] = {
    {200, "OK"},
    {204, "No Content"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {408, "Request Timeout"},
    {410, "Gone"},
    {429, "Too Many Requests"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
};

std::string status_text(int status) {
  for (const auto& [code, reason] : k_reason_phrases) {
    if (code == status)
      return fmt::format("{} {}", status, reason);
  }
  return std::to_string(status);
}

// Which statuses came back: "404 Not Found" when one did, "404 Not Found x60, 503 Service
// Unavailable x40" when several; empty when no response came at all.
std::string statuses_seen(const std::vector<engine::RunResult>& results) {
  std::map<int, int64_t> counts;
  for (const auto& result : results) {
    for (const auto& record : result.records) {
      if (record.status != 0)
        ++counts[record.status];
    }
  }
  if (counts.size() == 1)
    return status_text(counts.begin()->first);
  std::string text;
  for (const auto& [status, count] : counts)
    text += fmt::format("{}{} x{}", text.empty() ? "" : ", ", status_text(status), count);
  return text;
}

bool any_decided(const std::vector<engine::RunResult>& results) {
  return std::any_of(results.begin(), results.end(), [](const engine::RunResult& result) {
    return std::any_of(
        result.records.begin(), result.records.end(),
        [](const engine::RequestRecord& r) { return r.outcome != engine::Outcome::error; });
  });
}

// The configuration the runs are judged against, and where its limit and window came from.
struct Judged {
  config::Config config;
  std::string limit_source = "flag";
  std::string window_source = "flag";
  bool window_from_reset = false;
  std::vector<int64_t> window_readings_s = {};  // AdvertisedParams::window_readings_s
};

// --limit and --window as given, else as the responses advertised them, else the defaults
// (said so in the report and, for the window, on stderr). Throws when the limit cannot be
// known: usage when the endpoint decided requests without advertising one, cannot_test when
// it only answered errors (no --limit would make that testable).
Judged judged_config(const config::Config& config, const std::string& url,
                     const std::vector<engine::RunResult>& results, bool interrupted) {
  Judged judged{config};
  const AdvertisedParams advertised = read_advertised_params(results);
  const std::string statuses = statuses_seen(results);
  if (!config.checks.limit_given) {
    // Without any response the errors check tells the story (exit 3), not the missing limit.
    if (!advertised.limit && !statuses.empty() && !interrupted) {
      if (!any_decided(results)) {
        throw cannot_test(
            fmt::format("{} answered {} to every request and advertised no limit: nothing to test",
                        url, statuses));
      }
      throw usage_error(fmt::format(
          "--limit: required: {} advertised no limit (RateLimit or X-RateLimit headers); it "
          "answered {}",
          url, statuses));
    }
    judged.config.checks.limit = advertised.limit.value_or(config.checks.limit);
    judged.limit_source = advertised.limit ? "advertised" : "default";
  }
  if (!config.checks.window_given) {
    if (advertised.window_s) {
      judged.config.checks.window = std::chrono::seconds(*advertised.window_s);
      judged.window_source = "advertised";
      judged.window_from_reset = advertised.window_basis == AdvertisedParams::WindowBasis::reset;
      judged.window_readings_s = advertised.window_readings_s;
    } else {
      judged.window_source = "default";
    }
    // The verdict rests on a window nobody named: said once, whatever the output mode. Not
    // when nothing was decided: then there is no verdict on the limiter to qualify.
    if (!advertised.window_s && any_decided(results) && !interrupted) {
      std::cerr << fmt::format(
          "rlcheck: warning: --window: not given and {} advertised none (RateLimit-Policy w=, "
          "or a reset); judged against the default {}\n",
          url, config::format_duration(config.checks.window));
    }
  }
  return judged;
}

// The configuration with the window the responses advertised when --window was not given: what
// bounds the --verify-retry-after wait before the report is judged.
config::Config window_judged(const config::Config& config,
                             const std::vector<engine::RunResult>& results) {
  config::Config judged = config;
  if (!config.checks.window_given) {
    if (const auto window_s = read_advertised_params(results).window_s)
      judged.checks.window = std::chrono::seconds(*window_s);
  }
  return judged;
}

// --limiter-redis, for --fault: reachable, and a cluster with replicas when failover@ is
// asked. Throws FatalError(cannot_test) naming the flag otherwise.
faults::FaultTarget limiter_redis_target(const config::Config& config) {
  faults::FaultTarget target;
  target.timeout = config.load.timeout;
  if (!config.faults.limiter_redis)
    return target;
  auto endpoint = redis::parse_endpoint(*config.faults.limiter_redis);
  if (!endpoint)
    throw usage_error(fmt::format("--limiter-redis: {}", endpoint.error()));
  if (endpoint->tls)
    endpoint->tls_options = config.tls;
  target.endpoint = std::move(*endpoint);
  if (auto client = redis::SyncClient::connect(target.endpoint, target.timeout); !client)
    throw cannot_test(fmt::format("--limiter-redis: {}", client.error()));
  if (auto supported = faults::check_failover_support(target, config.faults.faults); !supported)
    throw cannot_test(supported.error());
  return target;
}

// The runs judged against `judged`: the report with its checks and verdict.
report::Report judge_http_runs(const config::Config& config, const Judged& judged,
                               const std::string& url, bool native,
                               const std::optional<checks::RetryVerification>& verification,
                               std::vector<engine::RunResult>& results,
                               std::vector<std::vector<checks::FaultWindow>>& fault_windows,
                               bool interrupted, coord::Session* shared) {
  report::Report report;
  report.mode = "http";
  report.retry_verification = verification;
  report.target.url = url;
  report.target.method = config.http.method;
  ContractChoice contract =
      choose_contract(judged.config, std::nullopt, judged.config.checks.limit);
  widen_for_clocks(contract, shared);
  report.params = configured_params(judged.config, contract);
  report.params.http_client = http::http_client_name(native);
  report.params.limit_source = judged.limit_source;
  report.params.window_source = judged.window_source;
  report.params.window_from_reset = judged.window_from_reset;
  for (const int64_t window_s : judged.window_readings_s)
    report.params.window_readings_ms.push_back(window_s * 1000);
  FitRecords fit(config);
  for (size_t i = 0; i < results.size(); ++i) {
    report.runs.push_back(checks::summarize_run(static_cast<int>(i + 1), results[i], contract.audit,
                                                std::move(fault_windows[i])));
    fit.keep(results[i]);
  }
  report.interrupted = interrupted;

  checks::CheckParams params = check_params(judged.config, report.params.limit, contract);
  params.key_ttl_applies = false;
  params.retry_hint_optional = !config.http.require_retry_after;
  judge(report, params);
  // A policy advertised as q per w leaves its algorithm open; unless the user named the
  // promise, every reading of it is tried before the test fails.
  const bool policy_advertised = judged.limit_source == "advertised" &&
                                 judged.window_source == "advertised" &&
                                 !judged.window_from_reset && !config.checks.burst &&
                                 !config.checks.refill && !config.checks.contract;
  if (!(policy_advertised && fit.read_advertised_policy(report, params, contract)))
    fit.explain(report, params, contract);
  describe_workers(report, shared);
  return report;
}

}  // namespace

report::Report check_http_endpoint(const config::Config& config, const std::string& url,
                                   engine::RunObserver* observer, report::RecordsWriter* records,
                                   coord::Session* shared) {
  // Many hosts: worker 0 prepares, merges and judges; the others only send their share.
  const bool judging = shared == nullptr || shared->leader();
  const uint64_t seed = config.seed ? *config.seed : std::random_device{}();
  http::HttpTarget target = make_http_target(config, url, seed);

  std::vector<engine::RunResult> results;
  std::optional<checks::RetryVerification> verification;
  bool interrupted = false;  // by Ctrl-C, during a run or a wait between them
  ProgressLine progress(config);
  faults::FaultApplier fault_applier(limiter_redis_target(config));
  std::vector<std::vector<checks::FaultWindow>> fault_windows;  // per run
  int runs_shipped = 0;  // many hosts: the runs this worker sent its share of
  for (int run = 1; run <= config.load.runs; ++run) {
    if (!prepare_run(config.http, run, judging)) {
      interrupted = true;
      break;
    }
    target.placeholders.run = run;
    target.seed = seed + static_cast<uint64_t>(run);
    const std::unique_ptr<engine::ClientFactory> factory_owner =
        http::make_http_client_factory(target);
    engine::ClientFactory& factory = *factory_owner;
    // The endpoint's keys are its own: a failover acts on the first master.
    faults::FaultSchedule fault_schedule(
        judging ? config.faults.faults : std::vector<config::FaultSpec>{}, fault_applier, "",
        observer);
    RunCounters others;
    engine::RunResult result = execute_shared_run(
        shared, run, factory, config.load, &fault_schedule,
        progress.for_run(fmt::format("run {}/{}", run, config.load.runs)), {}, others);
    if (!judging) {
      if (shared_runs_end(result, *shared, runs_shipped))
        break;
      continue;
    }
    if (result.cancelled) {
      fault_schedule.finish();
      break;  // a worker was lost before the run could start
    }
    results.push_back(std::move(result));
    fault_windows.push_back(fault_schedule.finish());
    if (records != nullptr)
      records->write_run(url, run, results.back().records);
    if (results.back().interrupted) {
      interrupted = true;
      break;
    }
    if (config.checks.verify_retry_after && run == config.load.runs) {
      std::vector<engine::RequestRecord> retried;
      verification = verify_retry_after(factory, results.back(), config.load, run,
                                        longest_retry_wait(window_judged(config, results)),
                                        announce_wait(config), retried);
      interrupted = verification->interrupted;
    }
    if (shared != nullptr && shared->lost_any())
      break;  // the runs after a lost worker could not be shared as the test asks
  }

  if (!judging) {
    // Worker 0 reports for everyone; should it be lost, the first worker to take its place
    // judges what was shipped (no faults were applied after it was lost, none are measured).
    RunCounters ignored;  // http has no transport counts
    const bool stands_in = judge_in_place_of_lost_leader(
        shared, runs_shipped,
        [&](int, engine::RunResult merged) {
          results.push_back(std::move(merged));
          fault_windows.emplace_back();
        },
        ignored);
    if (!stands_in)
      return {};
  }
  const Judged judged = judged_config(config, url, results, interrupted);
  // A window read off a timestamp reset may be a second either way: each reading is judged in
  // turn until one passes. When none does, the reading with the fewest failed checks is
  // reported (the later, the reset as read, on a tie): a check that another reading passes is
  // not failed for the second the headers cannot tell.
  std::vector<int64_t> readings = judged.window_readings_s;
  if (readings.empty())
    readings.push_back(0);  // the window as judged
  const auto failed_checks = [](const report::Report& judged_report) {
    return std::ranges::count_if(judged_report.checks, [](const checks::CheckResult& check) {
      return check.status == checks::Status::fail;
    });
  };
  report::Report report;
  for (size_t k = 0; k < readings.size(); ++k) {
    const bool last = k + 1 == readings.size();
    Judged reading = judged;
    if (readings[k] > 0)
      reading.config.checks.window = std::chrono::seconds(readings[k]);
    // Auditing writes into the records: every reading but the last audits a copy.
    std::vector<engine::RunResult> copies;
    std::vector<std::vector<checks::FaultWindow>> faults;
    if (!last) {
      copies = results;
      faults = fault_windows;
    }
    report::Report judged_report =
        judge_http_runs(config, reading, url, target.native, verification, last ? results : copies,
                        last ? fault_windows : faults, interrupted, shared);
    const bool settled = judged_report.verdict != checks::Verdict::fail;
    if (k == 0 || settled || failed_checks(judged_report) <= failed_checks(report))
      report = std::move(judged_report);
    if (settled)
      break;  // no other reading of the window changes a pass, an error or an interruption
  }
  return report;
}

}  // namespace rlcheck::app
