#include "report/json_report.hpp"

#include <cmath>

#include "app/build_info.hpp"

namespace rlcheck::report {
namespace {

using nlohmann::json;

// Milliseconds with microsecond precision: enough, and stable to read.
double rounded(double value) {
  return std::round(value * 1000.0) / 1000.0;
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
              {"duration_ms", rounded(run.duration_ms)},
              {"retry_after_s", retry},
              {"latency_ms",
               {{"p50", rounded(run.latency.p50)},
                {"p90", rounded(run.latency.p90)},
                {"p99", rounded(run.latency.p99)},
                {"max", rounded(run.latency.max)}}},
              {"error_kinds", run.error_kinds},
              {"peak",
               {{"allowed", run.peak.count},
                {"allowance", rounded(run.peak.allowance)},
                {"start_ms", rounded(static_cast<double>(run.peak.start_ns) / 1e6)},
                {"length_ms", rounded(static_cast<double>(run.peak.length_ns) / 1e6)}}}};
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
  if (run.interrupted)
    out["interrupted"] = true;
  return out;
}

}  // namespace

json to_json(const Report& report) {
  json target = {{"url", report.target.url}};
  if (report.mode == "redis") {
    target["strategy"] = report.target.strategy;
    target["key"] = report.target.key;
  } else {
    target["method"] = report.target.method;
  }
  if (!report.target.script.empty())
    target["script"] = report.target.script;
  if (report.target.embedded)
    target["embedded"] = true;
  json params = {{"requests", report.params.requests},   {"concurrency", report.params.concurrency},
                 {"runs", report.params.runs},           {"limit", report.params.limit},
                 {"window_ms", report.params.window_ms}, {"threads", report.params.threads}};
  params["limit_source"] = report.params.limit_source;
  if (report.params.interval_ms > 0)
    params["interval_ms"] = report.params.interval_ms;
  if (report.params.burst)
    params["burst"] = *report.params.burst;
  if (!report.params.refill.empty())
    params["refill"] = report.params.refill;

  json runs = json::array();
  for (const auto& run : report.runs)
    runs.push_back(run_to_json(run));
  json checks = json::array();
  for (const auto& check : report.checks) {
    checks.push_back({{"id", check.id},
                      {"status", checks::status_name(check.status)},
                      {"detail", check.detail}});
  }
  json out = {{"schema", "rlcheck.report/v1"},
              {"tool", {{"name", "rlcheck"}, {"version", app::version()}}},
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
                {"requests_per_second", std::round(report.summary.requests_per_second)},
                {"script_reloads", report.script_reloads}}},
              {"checks", checks},
              {"verdict", checks::verdict_name(report.verdict)},
              {"exit_code", report.exit_code}};
  if (report.interrupted)
    out["interrupted"] = true;
  return out;
}

json compare_to_json(const std::vector<Report>& reports, int exit_code) {
  json list = json::array();
  for (const auto& report : reports)
    list.push_back(to_json(report));
  return {{"schema", "rlcheck.compare/v1"},
          {"tool", {{"name", "rlcheck"}, {"version", app::version()}}},
          {"reports", list},
          {"exit_code", exit_code}};
}

}  // namespace rlcheck::report
