#include "report/json_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/build_info.hpp"
#include "report/find_max_report.hpp"

namespace rlcheck::report {
namespace {

using nlohmann::json;

// Milliseconds with microsecond precision: enough, and stable to read.
double rounded(double value) {
  return std::round(value * 1000.0) / 1000.0;
}

double ms_of(int64_t ns) {
  return rounded(static_cast<double>(ns) / 1e6);
}

json span_to_json(const checks::AdmissionPeak& span) {
  return {{"allowed", span.count},
          {"allowance", rounded(span.allowance)},
          {"start_ms", ms_of(span.start_ns)},
          {"length_ms", ms_of(span.length_ns)}};
}

// The contract audit of one run: worst span, utilisation and retry-hint errors.
json audit_to_json(const checks::RunStats& run) {
  json contract = {{"worst_span", span_to_json(run.contract.worst)},
                   {"identity", run.contract.worst_identity},
                   {"exceeded", run.contract.worst.exceeded()}};
  if (run.contract.boundary_burst.count > 0)
    contract["boundary_burst"] = span_to_json(run.contract.boundary_burst);
  // sliding-counter: the most it let through in one true sliding window (not a failure).
  if (run.contract.sliding_window.count > 0)
    contract["true_sliding_window"] = span_to_json(run.contract.sliding_window);
  // queue: the worst span is the departures'; the longest wait and what it is judged against.
  if (const auto& queue = run.queue) {
    json longest = nullptr;
    if (queue->longest) {
      longest = {{"identity", queue->longest->identity},
                 {"seq", queue->longest->seq},
                 {"sent_ms", ms_of(queue->longest->sent_ns)},
                 {"wait_ms", ms_of(queue->longest->wait_ns)}};
    }
    contract["queue"] = {{"longest_wait", longest},
                         {"unloaded_ms", ms_of(queue->unloaded_ns)},
                         {"promised_wait_ms", ms_of(queue->promised_wait_ns)},
                         {"tolerance_ms", ms_of(queue->tolerance_ns)},
                         {"waited_too_long", queue->waited_too_long()}};
    if (queue->nodelay > 0)
      contract["queue"]["nodelay"] = queue->nodelay;
  }
  // slow-down: the request most over the delay its position allows, and most under the least.
  if (const auto& slow = run.slow_down) {
    const auto request = [](const std::optional<checks::SlowDownRequest>& found) {
      if (!found)
        return json(nullptr);
      return json{{"identity", found->identity},
                  {"seq", found->seq},
                  {"sent_ms", ms_of(found->sent_ns)},
                  {"latency_ms", ms_of(found->latency_ns)},
                  {"position", found->position},
                  {"promised_ms", ms_of(found->promised_ns)},
                  {"tolerance_ms", ms_of(found->tolerance_ns)},
                  {"breached_by_ms", ms_of(found->margin_ns)}};
    };
    contract["slow_down"] = {{"unloaded_ms", ms_of(slow->unloaded_ns)},
                             {"unloaded_from_undelayed", slow->unloaded_from_undelayed},
                             {"longest_extra_ms", ms_of(slow->longest_extra_ns)},
                             {"judged_for_most_delay", slow->judged_late},
                             {"judged_for_least_delay", slow->judged_early},
                             {"most_over", request(slow->latest)},
                             {"most_under", request(slow->earliest)},
                             {"delayed_too_long", slow->too_late()},
                             {"delayed_too_little", slow->too_early()}};
  }
  // ban: the bans proved, and the first admission during one.
  if (const auto& ban = run.ban) {
    json first = nullptr;
    if (ban->first) {
      first = {{"identity", ban->first->identity},
               {"seq", ban->first->seq},
               {"sent_ms", ms_of(ban->first->sent_ns)},
               {"banned_by_ms", ms_of(ban->first->banned_ns)},
               {"ban_end_from_ms", ms_of(ban->first->ban_end_ns)}};
    }
    contract["ban"] = {{"bans_proved", ban->bans},
                       {"admitted_during_ban", ban->breaches},
                       {"first_admitted_during_ban", first}};
  }
  // concurrency: the most admissions in progress at once, surely (the proof) and possibly.
  if (const auto& cap = run.concurrency) {
    contract["concurrency"] = {{"cap", cap->cap},
                               {"hold_ms", ms_of(cap->hold_ns)},
                               {"hold_source", cap->hold_measured ? "measured" : "flag"},
                               {"most_in_flight_surely", cap->surely_at_once},
                               {"most_in_flight_possibly", cap->possibly_at_once},
                               {"identity", cap->surely_identity},
                               {"at_ms", ms_of(cap->surely_at_ns)},
                               {"seqs", cap->surely_seqs}};
  }
  json utilisation = {{"admitted", run.utilisation.admitted},
                      {"contract_allows", run.utilisation.allowed},
                      {"identity", run.utilisation.identity},
                      {"ratio", rounded(run.utilisation.ratio())}};
  utilisation["denials_judged"] = run.lockouts.judged;
  utilisation["denied_with_room"] = run.lockouts.count;
  if (const auto& worst = run.lockouts.worst) {
    utilisation["worst_lockout"] = {{"identity", worst->identity},
                                    {"seq", worst->seq},
                                    {"sent_ms", ms_of(worst->sent_ns)},
                                    {"used", rounded(worst->used)},
                                    {"capacity", rounded(worst->capacity)}};
    if (!worst->part.empty())
      utilisation["worst_lockout"]["contract"] = worst->part;
  }
  if (const auto& counting = run.lockouts.denial_counting) {
    utilisation["denial_counting"] = {{"identity", counting->identity},
                                      {"last_admitted_ms", ms_of(counting->last_admitted_ns)},
                                      {"denials", counting->denials},
                                      {"offered_per_s", rounded(counting->offered_per_s)}};
  }
  const checks::RetryAccuracy& accuracy = run.retry_accuracy;
  json errors = {{"judged", accuracy.errors.size()},
                 {"early", accuracy.early},
                 {"late", accuracy.late},
                 {"unexplained", accuracy.unexplained}};
  if (accuracy.any()) {
    const auto& counts = accuracy.errors.counts();
    errors["min_ms"] = counts.begin()->first;
    errors["median_ms"] = checks::error_at_rank(counts, accuracy.errors.size() / 2);
    errors["max_ms"] = counts.rbegin()->first;
  }
  json audit = {{"contract", contract}, {"utilisation", utilisation}, {"retry_error", errors}};
  // Several contracts: each part's worst span (its key an identity, or a group for group:).
  if (!run.parts.empty()) {
    json parts = json::array();
    for (const checks::PartAudit& part : run.parts) {
      json one = {{"spec", part.spec},
                  {"status", part.contract.worst.exceeded() ? "fail" : "pass"},
                  {"worst_span", span_to_json(part.contract.worst)},
                  {part.per_group ? "group" : "identity", part.contract.worst_identity}};
      if (part.contract.worst.exceeded())
        one["admitted_at_once"] = part.admitted_at_once;
      parts.push_back(std::move(one));
    }
    audit["contracts"] = std::move(parts);
  }
  return audit;
}

// runs[].faults: each fault's window on the run's clock and what the requests met in it.
json fault_to_json(const checks::FaultWindow& fault) {
  json out = {{"spec", fault.spec},
              {"at_ms", ms_of(fault.at_ns)},
              {"until_ms", ms_of(fault.until_ns)},
              {"during",
               {{"allowed", fault.during_allowed},
                {"denied", fault.during_denied},
                {"errors", fault.during_errors}}},
              {"recovered_after_ms", nullptr}};
  if (fault.recovered_after_ns)
    out["recovered_after_ms"] = ms_of(*fault.recovered_after_ns);
  if (!fault.applied) {
    out["applied"] = false;
    out["error"] = fault.error;
  }
  return out;
}

json stages_to_json(const std::vector<checks::StageStats>& stages) {
  json out = json::array();
  for (const checks::StageStats& stage : stages) {
    out.push_back({{"from_ms", rounded(stage.from_ms)},
                   {"to_ms", rounded(stage.to_ms)},
                   {"target_from_per_s", stage.target_from_per_s},
                   {"target_to_per_s", stage.target_to_per_s},
                   {"planned", stage.planned},
                   {"sent", stage.sent},
                   {"allowed", stage.allowed},
                   {"denied", stage.denied},
                   {"errors", stage.errors},
                   {"latency_ms",
                    {{"p50", histogram_figure(stage.latency_p50_ms)},
                     {"p99", histogram_figure(stage.latency_p99_ms)}}},
                   {"lateness_p99_ms", rounded(stage.lateness_p99_ms)}});
  }
  return out;
}

json run_to_json(const checks::RunStats& run) {
  json retry = {{"present", run.retry.present},
                {"missing", run.retry.missing},
                {"invalid", run.retry.invalid},
                {"min", nullptr},
                {"max", nullptr}};
  if (run.retry.min_ms)
    retry["min"] = static_cast<double>(*run.retry.min_ms) / 1000.0;
  if (run.retry.max_ms)
    retry["max"] = static_cast<double>(*run.retry.max_ms) / 1000.0;
  json out = {{"run", run.run},
              {"allowed", run.allowed},
              {"denied", run.denied},
              {"errors", run.errors},
              {"unknown", run.unknown},
              {"duration_ms", rounded(run.duration_ms)},
              {"retry_after_s", retry},
              {"latency_ms",
               {{"p50", histogram_figure(run.latency.p50)},
                {"p90", histogram_figure(run.latency.p90)},
                {"p99", histogram_figure(run.latency.p99)},
                {"p999", histogram_figure(run.latency.p999)},
                {"max", rounded(run.latency.max)}}},
              {"error_kinds", run.error_kinds},
              {"peak",
               {{"allowed", run.peak.count},
                {"allowance", rounded(run.peak.allowance)},
                {"start_ms", rounded(static_cast<double>(run.peak.start_ns) / 1e6)},
                {"length_ms", rounded(static_cast<double>(run.peak.length_ns) / 1e6)}}}};
  out.update(audit_to_json(run));
  // --cost: the audits counted units (peak and worst spans are in units).
  if (run.weighted) {
    out["units"] = {{"allowed", run.allowed_units}, {"denied", run.denied_units}};
    out["peak"]["unit"] = "units";
  }
  if (run.lateness) {
    // The furthest the run fell behind its schedule: its latest request's lateness.
    out["behind_schedule_ms"] = rounded(run.lateness->max);
    out["lateness_ms"] = {{"p50", rounded(run.lateness->p50)},
                          {"p99", rounded(run.lateness->p99)},
                          {"max", rounded(run.lateness->max)}};
  }
  if (!run.stages.empty())
    out["stages"] = stages_to_json(run.stages);
  if (run.virtual_span_ms)
    out["virtual_span_ms"] = rounded(*run.virtual_span_ms);
  if (run.limiter_clock) {
    const auto ms = [](int64_t ns) { return rounded(static_cast<double>(ns) / 1e6); };
    const engine::ClockDrift& clock = *run.limiter_clock;
    out["limiter_clock"] = {{"source", clock.source},
                            {"ahead_ms", ms(clock.ahead_ns)},
                            {"over_ms", ms(clock.over_ns)},
                            {"uncertainty_ms", ms(clock.uncertainty_ns)},
                            {"slack_ms", ms(clock.slack_ns)}};
  }
  if (!run.status_counts.empty())
    out["status_counts"] = run.status_counts;
  if (run.advertised.any()) {
    const auto& a = run.advertised;
    auto range = [](const std::optional<int64_t>& low, const std::optional<int64_t>& high) {
      return low ? json{{"min", *low}, {"max", *high}} : json(nullptr);
    };
    out["advertised"] = {{"limit", range(a.limit_min, a.limit_max)},
                         {"remaining", range(a.remaining_min, a.remaining_max)},
                         {"reset_s", range(a.reset_min_s, a.reset_max_s)},
                         {"malformed", a.malformed}};
    if (!a.malformed_sample.empty())
      out["advertised"]["malformed_sample"] = a.malformed_sample;
  }
  if (!run.retry.invalid_sample.empty())
    out["retry_after_s"]["invalid_sample"] = run.retry.invalid_sample;
  if (!run.error_samples.empty())
    out["error_samples"] = run.error_samples;
  if (!run.keys_without_ttl.empty())
    out["keys_without_ttl"] = run.keys_without_ttl;
  if (const auto longest = std::max_element(
          run.key_ttls.begin(), run.key_ttls.end(),
          [](const checks::KeyTtl& a, const checks::KeyTtl& b) { return a.ttl_ms < b.ttl_ms; });
      longest != run.key_ttls.end() && longest->ttl_ms >= 0) {
    out["longest_key_ttl"] = {{"key", longest->key}, {"ttl_ms", longest->ttl_ms}};
    if (longest->memory_bytes >= 0)
      out["longest_key_ttl"]["memory_bytes"] = longest->memory_bytes;
  }
  if (run.interrupted)
    out["interrupted"] = true;
  out["stopped_on_errors"] = run.stopped_on_errors;
  if (!run.by_node.empty())
    out["by_node"] = run.by_node;  // Redis Cluster only: a standalone server has no nodes
  if (!run.faults.empty()) {
    out["faults"] = json::array();
    for (const checks::FaultWindow& fault : run.faults)
      out["faults"].push_back(fault_to_json(fault));
  }
  return out;
}

}  // namespace

json to_json(const Report& report) {
  json target = {{"url", report.target.url}};
  if (!report.target.strategy.empty()) {
    target["strategy"] = report.target.strategy;
    target["key"] = report.target.key;
  }
  if (!report.target.method.empty())
    target["method"] = report.target.method;
  if (!report.target.script.empty())
    target["script"] = report.target.script;
  if (report.target.embedded)
    target["embedded"] = true;
  if (!report.target.time_source.empty())
    target["time_source"] = report.target.time_source;
  json params = {{"requests", report.params.requests},   {"concurrency", report.params.concurrency},
                 {"runs", report.params.runs},           {"limit", report.params.limit},
                 {"window_ms", report.params.window_ms}, {"threads", report.params.threads}};
  params["limit_source"] = report.params.limit_source;
  if (!report.params.http_client.empty())
    params["http_client"] = report.params.http_client;
  params["sources"] = {{"limit", report.params.limit_source},
                       {"window_ms", report.params.window_source}};
  if (report.params.window_source == "advertised")
    params["window_basis"] = report.params.window_from_reset ? "reset" : "policy";
  if (!report.params.window_readings_ms.empty())
    params["window_readings_ms"] = report.params.window_readings_ms;
  if (report.params.burst) {
    params["sources"]["burst"] = report.params.burst_source;
    params["sources"]["refill"] = report.params.refill_source;
  }
  if (report.params.interval_ms > 0)
    params["interval_ms"] = report.params.interval_ms;
  if (report.params.burst)
    params["burst"] = *report.params.burst;
  if (report.params.queue) {
    params["queue"] = *report.params.queue;
    params["sources"]["queue"] = report.params.queue_source;
    if (report.params.nodelay)
      params["nodelay"] = *report.params.nodelay;
    params["sources"]["refill"] = report.params.refill_source;
  }
  if (!report.params.refill.empty())
    params["refill"] = report.params.refill;
  if (!report.params.rate.empty()) {
    params["rate"] = report.params.rate;
    params["duration_ms"] = rounded(report.params.duration_ms);
  }
  if (!report.params.stages.empty()) {
    params["stages"] = json::array();
    for (const StageParam& stage : report.params.stages) {
      params["stages"].push_back(
          {{"duration_ms", rounded(stage.duration_ms)}, {"target_per_s", stage.target_per_s}});
    }
    params["duration_ms"] = rounded(report.params.duration_ms);
  }
  if (!report.params.arrivals.empty())
    params["arrivals"] = report.params.arrivals;
  params["audit"] = report.params.audit;
  params["identities"] = report.params.identities;
  if (!report.params.cost.empty())
    params["cost"] = report.params.cost;
  params["identity_dist"] = report.params.identity_dist;
  params["clock"] = report.params.virtual_clock ? "virtual" : "wall";
  if (report.params.virtual_clock)
    params["clock_note"] = clock_note(report);
  if (!report.params.source_addresses.empty())
    params["source_addresses"] = report.params.source_addresses;
  if (!report.params.clock_skew_ms.empty()) {
    params["clock_skew_ms"] = report.params.clock_skew_ms;
    params["clock_skew_read"] = report.params.clock_skew_read;
  }
  params["contract"] = report.params.contract;
  if (!report.params.contracts.empty()) {
    params["contracts"] = report.params.contracts;
    params["consume_on_deny"] = report.params.consume_on_deny;
    if (report.params.group_size > 0)
      params["group_size"] = report.params.group_size;
  }
  if (!report.params.anchor.empty())
    params["anchor"] = report.params.anchor;
  if (!report.params.anchor_source.empty())
    params["sources"]["anchor"] = report.params.anchor_source;
  params["early_tolerance_ms"] = report.params.early_tolerance_ms;
  params["late_tolerance_ms"] = report.params.late_tolerance_ms;
  params["hint_resolution_ms"] = nullptr;
  params["hint_resolution"] = nullptr;
  if (report.params.hint_resolution_ms != 0) {
    params["hint_resolution_ms"] = report.params.hint_resolution_ms;
    // As --hint-resolution spells it: "1ms" or "1s".
    params["hint_resolution"] = report.params.hint_resolution_ms >= 1000
                                    ? fmt::format("{}s", report.params.hint_resolution_ms / 1000)
                                    : fmt::format("{}ms", report.params.hint_resolution_ms);
    if (!report.params.hint_resolution_source.empty())
      params["sources"]["hint_resolution"] = report.params.hint_resolution_source;
  }
  params["retry_tolerances"] = json::array();
  for (const checks::HintTolerance& tolerance : report.params.retry_tolerances) {
    params["retry_tolerances"].push_back({{"resolution_ms", tolerance.resolution_ms},
                                          {"early_ms", tolerance.early_ms},
                                          {"late_ms", tolerance.late_ms}});
  }

  if (report.transport)
    params["pipeline"] = report.params.pipeline;
  if (const auto& topology = report.params.topology) {
    params["topology"] = {
        {"kind", topology->kind}, {"masters", topology->masters}, {"tls", topology->tls}};
  }

  json runs = json::array();
  for (const auto& run : report.runs)
    runs.push_back(run_to_json(run));
  json checks = json::array();
  for (const auto& check : report.checks) {
    checks.push_back({{"id", check.id},
                      {"status", checks::status_name(check.status)},
                      {"detail", check.detail}});
    if (check.inconclusive)
      checks.back()["inconclusive"] = true;  // the test could not be judged: verdict error
    if (check.warning)
      checks.back()["warning"] = true;  // a pass with a cost worth knowing
  }
  int64_t unknown = 0;  // errored requests that may have been admitted, over every run
  for (const auto& run : report.runs)
    unknown += run.unknown;
  json out = {{"schema", "rlcheck.report/v1"},
              {"tool", {{"name", "rlcheck"}, {"version", base::version()}}},
              {"mode", report.mode},
              {"target", target},
              {"params", params},
              {"runs", runs},
              {"summary",
               {{"allowed",
                 {{"min", report.summary.allowed_min},
                  {"median", report.summary.allowed_median},
                  {"max", report.summary.allowed_max}}},
                {"runs_over_limit", report.summary.runs_over_limit},
                {"unknown", unknown},
                {"requests_per_second", std::round(report.summary.requests_per_second)},
                {"script_reloads", report.script_reloads}}},
              {"checks", checks},
              {"verdict", checks::verdict_name(report.verdict)},
              {"exit_code", report.exit_code}};
  if (report.summary.virtual_span_ms)
    out["summary"]["virtual_span_ms"] = rounded(*report.summary.virtual_span_ms);
  if (report.find_max) {
    out["summary"]["max_rate"] = report.summary.max_rate ? json(*report.summary.max_rate) : json();
    out["find_max"] = find_max_json(*report.find_max);
  }
  if (report.transport) {
    const TransportCounts& transport = *report.transport;
    out["summary"]["redirects"] = {
        {"moved", transport.moved}, {"ask", transport.ask}, {"tryagain", transport.tryagain}};
    out["summary"]["reconnects"] = transport.reconnects;
    if (report.releases) {
      out["summary"]["releases"] = {{"released", report.releases->released},
                                    {"failed", report.releases->failed}};
      if (!report.releases->first_error.empty())
        out["summary"]["releases"]["first_error"] = report.releases->first_error;
    }
    out["keys_left"] = report.keys_left;
  }
  if (report.retry_verification && report.retry_verification->attempted) {
    const auto& v = *report.retry_verification;
    out["retry_verification"] = {{"run", v.run},         {"identity", v.identity},
                                 {"told_ms", v.told_ms}, {"waited_ms", v.waited_ms},
                                 {"allowed", v.allowed}, {"outcome", v.outcome},
                                 {"phases", v.phases}};
  }
  if (report.serial_rerun) {
    const SerialRerun& serial = *report.serial_rerun;
    out["serial_rerun"] = {{"requests", serial.requests},
                           {"allowed", serial.allowed},
                           {"peak", serial.peak},
                           {"allowance", serial.allowance},
                           {"within_contract", serial.within}};
  }
  if (report.contract_fit) {
    const checks::ContractFit& fit = *report.contract_fit;
    json fitted = {{"contract", fit.contract}, {"flags", fit.flags}, {"clears", fit.clears}};
    if (!fit.consume_on_deny.empty()) {
      fitted["consume_on_deny"] = fit.consume_on_deny;
    } else if (fit.contract == "token-bucket") {
      fitted["burst"] = fit.burst;
      fitted["refill"] = fit.refill;
    } else if (fit.queue) {
      fitted["queue"] = *fit.queue;
      fitted["refill"] = fit.refill;
      if (fit.nodelay)
        fitted["nodelay"] = *fit.nodelay;
    } else if (fit.slow_down) {
      const checks::SlowDownRule& slow = *fit.slow_down;
      fitted["after"] = slow.after;
      fitted["window_ms"] = slow.window_ns / 1'000'000;
      fitted["step_ms"] = slow.step_ns / 1'000'000;
      fitted["max_ms"] = slow.max_ns > 0 ? json(slow.max_ns / 1'000'000) : json(nullptr);
      fitted["kind"] = slow.kind == checks::SlowDownRule::Kind::first_hit ? "first-hit"
                       : slow.kind == checks::SlowDownRule::Kind::fixed   ? "fixed"
                                                                          : "sliding";
    } else if (fit.concurrency) {
      fitted["cap"] = *fit.concurrency;
    } else {
      fitted["limit"] = fit.limit;
      fitted["window_ms"] = fit.window_ms;
      if (fit.ban_ms)
        fitted["ban_ms"] = *fit.ban_ms;
    }
    if (!fit.anchor.empty())
      fitted["anchor"] = fit.anchor;
    out["contract_fit"] = fitted;
  }
  if (report.workers) {
    const Workers& workers = *report.workers;
    json list = json::array();
    for (const WorkerSummary& worker : workers.list) {
      json entry = {{"index", worker.index},
                    {"host", worker.host},
                    {"requests", worker.requests},
                    {"clock_offset_ms", worker.clock_offset_ms},
                    {"clock_uncertainty_ms", worker.clock_uncertainty_ms}};
      if (worker.lost) {
        entry["lost"] = true;
        entry["lost_in_run"] = worker.lost_in_run;
      }
      list.push_back(entry);
    }
    out["workers"] = list;
    out["session"] = {{"id", workers.session},
                      {"clock_uncertainty_ms", workers.clock_uncertainty_ms}};
    if (!workers.lost.empty())
      out["session"]["lost"] = workers.lost;
    out["session"]["merged_by"] = workers.merged_by;
  }
  if (report.interrupted)
    out["interrupted"] = true;
  return out;
}

json compare_to_json(const std::vector<Report>& reports, int exit_code) {
  json list = json::array();
  checks::Verdict verdict = checks::Verdict::pass;
  for (const auto& report : reports) {
    list.push_back(to_json(report));
    verdict = checks::worst_verdict(verdict, report.verdict);
  }
  return {{"schema", "rlcheck.compare/v1"},
          {"tool", {{"name", "rlcheck"}, {"version", base::version()}}},
          {"reports", list},
          {"verdict", checks::verdict_name(verdict)},
          {"exit_code", exit_code}};
}

}  // namespace rlcheck::report
