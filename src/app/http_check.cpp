#include "app/http_check.hpp"

#include <algorithm>
#include <map>
#include <random>

#include <fmt/format.h>

#include "app/contract_choice.hpp"
#include "app/exit_code.hpp"
#include "app/judgement.hpp"
#include "app/progress.hpp"
#include "app/retry_verification.hpp"
#include "checks/checks.hpp"
#include "engine/interrupt.hpp"
#include "http/http_client.hpp"
#include "process/child_process.hpp"

namespace rlcheck::app {
namespace {

constexpr auto k_reset_cmd_limit = std::chrono::seconds(60);

engine::PlaceholderTemplate text_template(const std::string& text) {
  // Braces that name no placeholder stay text (JSON bodies); this cannot fail.
  return *engine::PlaceholderTemplate::parse(text, engine::PlaceholderTemplate::Unknown::keep);
}

http::HttpTarget make_target(const config::Config& config, const std::string& url, uint64_t seed) {
  const config::HttpConfig& options = config.http;
  http::HttpTarget target;
  target.method = options.method;
  target.url = text_template(url);
  for (const std::string& header : options.headers)
    target.headers.push_back(text_template(header));
  if (options.body)
    target.body = text_template(*options.body);
  target.rules.allowed = *http::StatusSet::parse(options.allowed_status);
  target.rules.denied = *http::StatusSet::parse(options.denied_status);
  target.rules.require_retry_after = options.require_retry_after;
  target.timeout = config.load.timeout;
  target.insecure = options.insecure;
  target.concurrency = config.load.concurrency;
  target.placeholders.limit = config.checks.limit;
  target.placeholders.window_ms = config::to_milliseconds(config.checks.window);
  target.placeholders.identities = config.load.identities;
  target.seed = seed;
  return target;
}

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
bool prepare_run(const config::HttpConfig& options, int run) {
  if (run > 1 && options.between_runs.count() > 0 &&
      !engine::wait_until(std::chrono::steady_clock::now() + options.between_runs)) {
    return false;
  }
  return options.reset_cmd.empty() || run_reset_cmd(options.reset_cmd);
}

// The limit most responses advertised, if any did.
std::optional<int64_t> advertised_limit(const std::vector<engine::RunResult>& results) {
  std::map<int64_t, int64_t> votes;
  for (const auto& result : results) {
    for (const auto& record : result.records) {
      if (record.advertised_limit)
        ++votes[*record.advertised_limit];
    }
  }
  if (votes.empty())
    return std::nullopt;
  return std::max_element(votes.begin(), votes.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

}  // namespace

report::Report check_http_endpoint(const config::Config& config, const std::string& url,
                                   engine::RunObserver* observer) {
  const uint64_t seed = config.seed ? *config.seed : std::random_device{}();
  http::HttpTarget target = make_target(config, url, seed);

  std::vector<engine::RunResult> results;
  std::optional<checks::RetryVerification> verification;
  bool interrupted = false;  // by Ctrl-C, during a run or a wait between them
  ProgressLine progress(config);
  for (int run = 1; run <= config.load.runs; ++run) {
    if (!prepare_run(config.http, run)) {
      interrupted = true;
      break;
    }
    target.placeholders.run = run;
    target.seed = seed + static_cast<uint64_t>(run);
    http::HttpClientFactory factory(target);
    results.push_back(
        engine::execute_run(factory, config.load, observer,
                            progress.for_run(fmt::format("run {}/{}", run, config.load.runs))));
    if (results.back().interrupted) {
      interrupted = true;
      break;
    }
    if (config.checks.verify_retry_after && run == config.load.runs) {
      std::vector<engine::RequestRecord> retried;
      verification = verify_retry_after(factory, results.back(), config.load, run,
                                        longest_retry_wait(config), announce_wait(config), retried);
      interrupted = verification->interrupted;
    }
  }

  report::Report report;
  report.mode = "http";
  report.retry_verification = verification;
  report.target.url = url;
  report.target.method = config.http.method;
  int64_t limit = config.checks.limit;
  std::string limit_source = "flag";
  if (!config.checks.limit_given) {
    const auto advertised = advertised_limit(results);
    // Without any response the errors check tells the story (exit 3), not the missing limit.
    const bool any_response =
        std::any_of(results.begin(), results.end(), [](const engine::RunResult& result) {
          return std::any_of(result.records.begin(), result.records.end(),
                             [](const engine::RequestRecord& r) { return r.status != 0; });
        });
    if (!advertised && any_response && !interrupted) {
      throw usage_error(fmt::format(
          "--limit: required: {} advertised no limit (RateLimit or X-RateLimit headers)", url));
    }
    limit = advertised.value_or(config.checks.limit);
    limit_source = advertised ? "advertised" : "default";
  }
  const ContractChoice contract = choose_contract(config, std::nullopt, limit);
  report.params = configured_params(config, contract);
  report.params.limit = limit;
  report.params.limit_source = limit_source;
  for (size_t i = 0; i < results.size(); ++i) {
    report.runs.push_back(
        checks::summarize_run(static_cast<int>(i + 1), results[i], contract.audit));
  }
  report.interrupted = interrupted;

  checks::CheckParams params = check_params(config, report.params.limit, contract);
  params.key_ttl_applies = false;
  params.retry_hint_optional = !config.http.require_retry_after;
  judge(report, params);
  return report;
}

}  // namespace rlcheck::app
