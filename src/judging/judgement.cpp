#include "judging/judgement.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "config/clock_skew.hpp"
#include "config/duration.hpp"
#include "config/identity_dist.hpp"
#include "judging/slo_check.hpp"

namespace rlcheck::judging {

namespace {

// Several contracts, as the reports name them: "sliding:5/1s + sliding:20/1m".
std::string parts_text(const ContractChoice& contract) {
  std::string text;
  for (const checks::ContractPart& part : contract.audit.parts)
    text += (text.empty() ? "" : " + ") + part.spec;
  return text;
}

}  // namespace

report::Params configured_params(const config::Config& config, const ContractChoice& contract) {
  report::Params params;
  params.requests = config.load.requests;
  params.concurrency = config.load.concurrency;
  params.runs = config.load.runs;
  params.threads = config.load.threads;
  params.limit = config.checks.limit;
  params.window_ms = config::to_milliseconds(config.checks.window);
  params.limit_source = config.checks.limit_given ? "flag" : "default";
  params.window_source = config.checks.window_given ? "flag" : "default";
  params.interval_ms = static_cast<double>(config.load.interval.count()) / 1e6;
  if (config.load.rate) {
    params.rate = config::format_rate(*config.load.rate);
    params.duration_ms = static_cast<double>(config.load.rate->period.count()) *
                         static_cast<double>(config.load.requests) /
                         static_cast<double>(config.load.rate->tokens) / 1e6;
  }
  if (!config.load.stages.empty()) {
    double total_ms = 0;
    for (const config::Stage& stage : config.load.stages) {
      const double ms = static_cast<double>(stage.duration.count()) / 1e6;
      params.stages.push_back({ms, stage.to_per_s});
      total_ms += ms;
    }
    params.duration_ms = total_ms;
  }
  if (config.load.open_model())
    params.arrivals = config.load.arrivals == config::Arrivals::poisson ? "poisson" : "uniform";
  params.identities = config.load.identities;
  if (config.load.costs.weighted())
    params.cost = config::format_cost(config.load.costs);
  params.identity_dist = config::format_identity_dist(config.load.identity_dist);
  params.virtual_clock = config.load.virtual_clock;
  params.source_addresses = config.load.source_addresses;
  params.clock_skew_ms = config::clock_skews_ms(config.load.clock_skews);
  params.contract = contract.name;
  params.anchor = contract.anchor;
  if (config.checks.ban) {
    params.contract = fmt::format("ban:{}:{}/{},{}{}", contract.name, config.checks.limit,
                                  config::format_duration(config.checks.window),
                                  config::format_duration(*config.checks.ban),
                                  config.checks.ban_renews ? ",renew" : "");
  }
  if (config.checks.slow_down)
    params.contract = config::format_slow_down(*config.checks.slow_down);
  if (!contract.audit.parts.empty()) {
    params.contract = parts_text(contract);
    params.anchor.clear();
    for (const checks::ContractPart& part : contract.audit.parts)
      params.contracts.push_back(part.spec);
    params.consume_on_deny = config.checks.consume_on_deny ? "checked" : "none";
    params.group_size = config.load.group_size;
  }
  // Until hints are judged (judge), the tolerances of whole-second hints; both resolutions'.
  const checks::HintTolerance whole_seconds = contract.audit.tolerance.at(1000);
  params.early_tolerance_ms = whole_seconds.early_ms;
  params.late_tolerance_ms = whole_seconds.late_ms;
  params.retry_tolerances = {contract.audit.tolerance.at(1), whole_seconds};
  if (contract.name == "queue") {
    params.queue = contract.audit.queue_depth;
    params.queue_source = config.checks.queue ? "flag" : "default";
    if (contract.audit.queue_nodelay > 0)
      params.nodelay = contract.audit.queue_nodelay;
    params.refill = config::format_rate(contract.refill);
    params.refill_source = config.checks.refill ? "flag" : "default";
  } else if (contract.audit.rule.kind == checks::AdmissionRule::Kind::bucket) {
    params.burst = contract.burst;
    params.refill = config::format_rate(contract.refill);
    params.burst_source = config.checks.burst ? "flag" : "default";
    params.refill_source = config.checks.refill ? "flag" : "default";
  }
  return params;
}

namespace {

// What a limiter key must remember: one window (two for a sliding-window counter, whose
// previous window still weighs), or for a bucket the time it takes to refill from empty to
// full (after that its state is the same as no key at all).
int64_t key_life_ms(const checks::AdmissionRule& rule) {
  if (rule.kind == checks::AdmissionRule::Kind::sliding_counter)
    return 2 * rule.window_ns / 1'000'000;
  if (rule.kind != checks::AdmissionRule::Kind::bucket)
    return rule.window_ns / 1'000'000;
  if (rule.tokens_per_ns <= 0)
    return 0;
  // In steps: the ticks that bring B tokens, the first up to an interval away (Symfony's
  // expiration, calculateTimeForTokens(burst)).
  if (rule.stepped()) {
    const int64_t ticks = (rule.burst + rule.step_tokens - 1) / rule.step_tokens;
    return ticks * rule.step_ns / 1'000'000;
  }
  return static_cast<int64_t>(
      std::ceil(static_cast<double>(rule.burst) / rule.tokens_per_ns / 1e6));
}

// Several contracts: the longest any part needs.
int64_t longest_key_life_ms(const ContractChoice& contract) {
  int64_t longest = key_life_ms(contract.audit.rule);
  for (const checks::ContractPart& part : contract.audit.parts)
    longest = std::max(longest, key_life_ms(part.rule));
  return longest;
}

}  // namespace

checks::CheckParams check_params(const config::Config& config, int64_t limit,
                                 const ContractChoice& contract) {
  checks::CheckParams params;
  const int64_t max_retry_after_ms = contract.audit.max_retry_after_ms;
  // The details name it: "fixed first-hit contract", "sliding-counter first-hit contract".
  params.contract = contract.anchor == "first-hit" && !contract.audit.rule.stepped()
                        ? contract.name + " first-hit"
                        : contract.name;
  if (!contract.audit.parts.empty()) {
    params.contract = parts_text(contract);
    params.consume_on_deny = config.checks.consume_on_deny ? "checked" : "none";
  }
  params.stepped = contract.audit.rule.stepped();
  if (params.stepped)
    params.tick_anchor = contract.anchor;
  params.bucket_may_predate_run =
      params.stepped && contract.anchor == "first-hit" && !contract.audit.fresh_state;
  params.phase_unknown =
      contract.anchor == "first-hit" && !contract.audit.fresh_state && !params.stepped;
  if (config.checks.slow_down)
    params.slow_down = config::format_slow_down(*config.checks.slow_down);
  params.fresh_state = contract.audit.fresh_state;
  params.retry_tolerance = contract.audit.tolerance;
  params.hint_resolution = config.checks.hint_resolution;
  params.limit = limit;
  params.requests = config.load.requests;
  params.window_ms = config::to_milliseconds(config.checks.window);
  params.max_retry_after_ms = max_retry_after_ms;
  params.max_errors = config.checks.max_errors;
  params.exact = config.checks.exact;
  params.verify_retry_after = config.checks.verify_retry_after;
  params.key_ttl_needed_ms = longest_key_life_ms(contract);
  params.expect_fail_mode = config.checks.expect_fail_mode;
  params.recovery_ms = config::to_milliseconds(config.checks.recovery);
  params.clock_skews = config.load.clock_skews;
  return params;
}

std::chrono::milliseconds longest_retry_wait(const config::Config& config) {
  return std::chrono::milliseconds(
      config::to_milliseconds(config.checks.max_retry_after.value_or(config.checks.window)));
}

std::function<void(int64_t wait_ms)> announce_wait(const config::Config& config) {
  if (config.output.quiet || config.output.hook)
    return {};
  return [](int64_t wait_ms) {
    std::cerr << fmt::format("rlcheck: verifying Retry-After: retrying in {}ms, as told\n",
                             wait_ms);
  };
}

namespace {

// --virtual-clock: a run whose real time outran its virtual span may have had state ended by a
// TTL (on Redis's real clock) before its virtual window did. An over-admission is then no proof
// against the limiter: such failures are not judged, and say why.
void withhold_unproven_admissions(report::Report& report) {
  if (!report.params.virtual_clock)
    return;
  double real_ms = 0;
  double virtual_ms = 0;
  for (const checks::RunStats& run : report.runs) {
    real_ms += run.duration_ms;
    virtual_ms += run.virtual_span_ms.value_or(0);
  }
  if (real_ms <= virtual_ms)
    return;
  for (checks::CheckResult& check : report.checks) {
    if (check.status != checks::Status::fail || (check.id != "limit" && check.id != "contract"))
      continue;
    check.status = checks::Status::skip;
    check.detail = fmt::format(
        "not judged: the runs took {:.0f} ms of real time for {:.0f} ms of virtual time, so a TTL "
        "may have ended the limiter's state before its virtual window did; lower --rate (or "
        "lengthen the span) so virtual time runs ahead. Measured: {}",
        real_ms, virtual_ms, check.detail);
  }
}

}  // namespace

void judge(report::Report& report, const checks::CheckParams& params) {
  // --hint-resolution looks at every hint of the test before any is judged.
  const bool as_whole_seconds =
      checks::settle_hint_resolution(report.runs, params.hint_resolution, params.retry_tolerance);
  // The report shows the tolerance that judged the hints: the finest resolution's when runs
  // somehow mixed them (its tolerance is the one that can fail a hint).
  for (const checks::RunStats& run : report.runs) {
    for (int32_t resolution : run.retry_accuracy.resolutions) {
      if (report.params.hint_resolution_ms == 0 || resolution < report.params.hint_resolution_ms)
        report.params.hint_resolution_ms = resolution;
    }
  }
  if (report.params.hint_resolution_ms != 0) {
    const checks::HintTolerance judged =
        params.retry_tolerance.at(report.params.hint_resolution_ms);
    report.params.early_tolerance_ms = judged.early_ms;
    report.params.late_tolerance_ms = judged.late_ms;
    if (params.hint_resolution != config::HintResolution::auto_detect)
      report.params.hint_resolution_source = "flag";
    else
      report.params.hint_resolution_source = as_whole_seconds ? "inferred" : "format";
  }
  report.checks = checks::evaluate_checks(report.runs, params, report.retry_verification);
  if (report.find_max) {
    report.checks.push_back(slo_check(*report.find_max));
    report.params.runs = static_cast<int>(report.runs.size());
  }
  withhold_unproven_admissions(report);
  report.verdict = checks::verdict_of(report.checks);
  if (report.interrupted)
    report.verdict = checks::Verdict::interrupted;  // the checks saw only part of the test
  report.summary = report::summarize(report.runs);
  if (report.find_max)
    report.summary.max_rate = report.find_max->max_rate;
}

}  // namespace rlcheck::judging
