#include <doctest/doctest.h>

#include <string>

#include "base/build_info.hpp"
#include "report/json_report.hpp"
#include "shared/report_description.hpp"

using nlohmann::json;
using rlcheck::checks::CheckResult;
using rlcheck::checks::RunStats;
using rlcheck::checks::Status;
using rlcheck::checks::Verdict;
using rlcheck::report::compare_to_json;
using rlcheck::report::Report;
using rlcheck::report::to_json;

namespace {

Report sample_report() {
  Report report;
  report.target.url = "redis://127.0.0.1:6379";
  rlcheck::test::describe(report);
  report.target.strategy = "naive";
  rlcheck::test::describe(report);
  report.target.key = "rlcheck:abc:";
  rlcheck::test::describe(report);
  report.params.requests = 200;
  report.params.concurrency = 50;
  report.params.runs = 1;
  report.params.threads = 2;
  report.params.limit = 10;
  report.params.window_ms = 60'000;

  RunStats run;
  run.run = 1;
  run.requests = 200;
  run.allowed = 37;
  run.denied = 160;
  run.errors = 3;
  run.duration_ms = 12.34567;
  run.latency = {1.2344, 2.5, 3.75, 4.0};
  run.retry.present = 2;
  run.retry.min_ms = 1'500;
  run.retry.max_ms = 60'000;
  run.error_kinds["timeout"] = 3;
  run.peak.count = 37;
  run.peak.allowance = 10;
  run.peak.start_ns = 2'000'000;
  run.peak.length_ns = 1'500'000;
  report.runs.push_back(run);

  report.summary.allowed_min = 37;
  report.summary.allowed_median = 37;
  report.summary.allowed_max = 37;
  report.summary.runs_over_limit = 1;
  report.summary.requests_per_second = 16'199.6;
  report.checks = {{"limit", Status::fail, "1 of 1 runs over the limit"},
                   {"exact", Status::skip, "without --exact"},
                   {"errors", Status::pass, "0 errored requests"}};
  report.verdict = Verdict::fail;
  report.exit_code = 1;
  report.script_reloads = 2;
  return report;
}

}  // namespace

TEST_CASE("to_json names its schema and the tool") {
  const json j = to_json(sample_report());
  CHECK(j.at("schema") == "rlcheck.report/v1");
  CHECK(j.at("tool").at("name") == "rlcheck");
  CHECK(j.at("tool").at("version") == std::string(rlcheck::base::version()));
  CHECK(j.at("mode") == "redis");
  CHECK(j.at("verdict") == "fail");
  CHECK(j.at("exit_code") == 1);
  CHECK_FALSE(j.contains("interrupted"));
}

TEST_CASE("to_json target and params, with optional fields only when set") {
  Report report = sample_report();
  json j = to_json(report);
  CHECK(j.at("target").at("url") == "redis://127.0.0.1:6379");
  CHECK(j.at("target").at("strategy") == "naive");
  CHECK(j.at("target").at("key") == "rlcheck:abc:");
  CHECK_FALSE(j.at("target").contains("script"));
  CHECK_FALSE(j.at("target").contains("embedded"));
  const json& params = j.at("params");
  CHECK(params.at("requests") == 200);
  CHECK(params.at("concurrency") == 50);
  CHECK(params.at("runs") == 1);
  CHECK(params.at("limit") == 10);
  CHECK(params.at("window_ms") == 60'000);
  CHECK(params.at("threads") == 2);
  CHECK_FALSE(params.contains("interval_ms"));
  CHECK_FALSE(params.contains("burst"));
  CHECK_FALSE(params.contains("refill"));
  CHECK_FALSE(params.contains("source_addresses"));

  report.target.script = "limits/mine.lua";
  rlcheck::test::describe(report);
  report.target.embedded = true;
  report.params.interval_ms = 2.5;
  report.params.burst = 15;
  report.params.refill = "5/1s";
  report.params.source_addresses = {"127.0.0.1", "127.0.0.2"};
  report.interrupted = true;
  j = to_json(report);
  CHECK(j.at("target").at("script") == "limits/mine.lua");
  CHECK(j.at("target").at("embedded") == true);
  CHECK(j.at("params").at("interval_ms") == 2.5);
  CHECK(j.at("params").at("burst") == 15);
  CHECK(j.at("params").at("refill") == "5/1s");
  CHECK(j.at("params").at("source_addresses") == json::array({"127.0.0.1", "127.0.0.2"}));
  CHECK(j.at("interrupted") == true);
}

TEST_CASE("to_json params: the hint resolution as --hint-resolution spells it, and its source") {
  Report report = sample_report();
  json j = to_json(report);
  CHECK(j.at("params").at("hint_resolution").is_null());
  CHECK_FALSE(j.at("params").at("sources").contains("hint_resolution"));
  CHECK_FALSE(j.at("params").contains("window_readings_ms"));

  report.params.hint_resolution_ms = 1000;
  report.params.hint_resolution_source = "inferred";
  report.params.window_readings_ms = {2000, 3000};
  j = to_json(report);
  CHECK(j.at("params").at("hint_resolution") == "1s");
  CHECK(j.at("params").at("sources").at("hint_resolution") == "inferred");
  CHECK(j.at("params").at("window_readings_ms") == json::array({2000, 3000}));
  report.params.hint_resolution_ms = 1;
  report.params.hint_resolution_source = "flag";
  j = to_json(report);
  CHECK(j.at("params").at("hint_resolution") == "1ms");
  CHECK(j.at("params").at("sources").at("hint_resolution") == "flag");
}

TEST_CASE("to_json params: the retry tolerance that judged the hints, and every resolution's") {
  Report report = sample_report();
  json j = to_json(report);
  CHECK(j.at("params").at("hint_resolution_ms").is_null());
  CHECK(j.at("params").at("early_tolerance_ms") == 1000);
  CHECK(j.at("params").at("retry_tolerances") == json::array());

  report.params.hint_resolution_ms = 1;
  report.params.early_tolerance_ms = 2;
  report.params.late_tolerance_ms = 2;
  report.params.retry_tolerances = {{1, 2, 2}, {1000, 1000, 6000}};
  j = to_json(report);
  CHECK(j.at("params").at("hint_resolution_ms") == 1);
  CHECK(j.at("params").at("early_tolerance_ms") == 2);
  CHECK(j.at("params").at("late_tolerance_ms") == 2);
  CHECK(j.at("params").at("retry_tolerances") ==
        json::parse(R"([{"resolution_ms": 1, "early_ms": 2, "late_ms": 2},
                        {"resolution_ms": 1000, "early_ms": 1000, "late_ms": 6000}])"));
}

TEST_CASE("to_json params.sources: limit and window always, burst and refill with a bucket") {
  Report report = sample_report();
  json j = to_json(report);
  CHECK(j.at("params").at("sources") == json{{"limit", "flag"}, {"window_ms", "flag"}});
  CHECK(j.at("params").at("limit_source") == "flag");
  CHECK_FALSE(j.at("params").contains("window_basis"));

  report.mode = "http";
  rlcheck::test::describe(report);
  report.params.limit_source = "advertised";
  report.params.window_source = "advertised";
  report.params.window_from_reset = true;
  report.params.burst = 5;
  report.params.refill = "5/10s";
  report.params.burst_source = "flag";
  report.params.refill_source = "default";
  j = to_json(report);
  CHECK(j.at("params").at("sources") == json{{"limit", "advertised"},
                                             {"window_ms", "advertised"},
                                             {"burst", "flag"},
                                             {"refill", "default"}});
  CHECK(j.at("params").at("limit_source") == "advertised");
  CHECK(j.at("params").at("window_basis") == "reset");
}

TEST_CASE("to_json runs: counts, milliseconds to the microsecond, hints in seconds") {
  const json run = to_json(sample_report()).at("runs").at(0);
  CHECK(run.at("run") == 1);
  CHECK(run.at("allowed") == 37);
  CHECK(run.at("denied") == 160);
  CHECK(run.at("errors") == 3);
  CHECK(run.at("duration_ms").get<double>() == doctest::Approx(12.346));
  // Percentiles to the histogram's three significant digits; max is a value seen, to the µs.
  CHECK(run.at("latency_ms").at("p50").get<double>() == doctest::Approx(1.23));
  CHECK(run.at("latency_ms").at("p90") == 2.5);
  CHECK(run.at("latency_ms").at("p99") == 3.75);
  CHECK(run.at("latency_ms").at("max") == 4.0);
  const json& retry = run.at("retry_after_s");
  CHECK(retry.at("present") == 2);
  CHECK(retry.at("missing") == 0);
  CHECK(retry.at("invalid") == 0);
  CHECK(retry.at("min").get<double>() == doctest::Approx(1.5));
  CHECK(retry.at("max").get<double>() == doctest::Approx(60.0));
  CHECK(run.at("error_kinds").at("timeout") == 3);
  const json& peak = run.at("peak");
  CHECK(peak.at("allowed") == 37);
  CHECK(peak.at("allowance") == 10.0);
  CHECK(peak.at("start_ms").get<double>() == doctest::Approx(2.0));
  CHECK(peak.at("length_ms").get<double>() == doctest::Approx(1.5));
  CHECK_FALSE(run.contains("error_samples"));
  CHECK_FALSE(run.contains("keys_without_ttl"));
  CHECK_FALSE(run.contains("interrupted"));
}

TEST_CASE("to_json runs: null hints, samples, keys and interruption when present") {
  Report report = sample_report();
  RunStats& run = report.runs[0];
  run.retry = {};
  run.error_samples["timeout"] = "no reply within 5s";
  run.keys_without_ttl = {"rl:k"};
  run.interrupted = true;
  const json j = to_json(report).at("runs").at(0);
  CHECK(j.at("retry_after_s").at("min").is_null());
  CHECK(j.at("retry_after_s").at("max").is_null());
  CHECK(j.at("error_samples").at("timeout") == "no reply within 5s");
  CHECK(j.at("keys_without_ttl") == json::array({"rl:k"}));
  CHECK(j.at("interrupted") == true);
}

TEST_CASE("to_json redis: topology, pipeline, redirects, reconnects and keys left") {
  Report report = sample_report();
  json j = to_json(report);
  CHECK(j.at("params").at("pipeline") == 1);
  CHECK_FALSE(j.at("params").contains("topology"));
  CHECK(j.at("summary").at("redirects") == json{{"moved", 0}, {"ask", 0}, {"tryagain", 0}});
  CHECK(j.at("summary").at("reconnects") == 0);
  CHECK(j.at("keys_left") == json::array());

  report.params.pipeline = 8;
  report.params.topology = rlcheck::report::Topology{"cluster", 3, true};
  report.transport = {4, 1, 2, 5};
  report.keys_left = {"rlcheck:ab:lua:1"};
  j = to_json(report);
  CHECK(j.at("params").at("pipeline") == 8);
  CHECK(j.at("params").at("topology") == json{{"kind", "cluster"}, {"masters", 3}, {"tls", true}});
  CHECK(j.at("summary").at("redirects") == json{{"moved", 4}, {"ask", 1}, {"tryagain", 2}});
  CHECK(j.at("summary").at("reconnects") == 5);
  CHECK(j.at("keys_left") == json::array({"rlcheck:ab:lua:1"}));

  // None of it applies to an HTTP endpoint, which has no transport or topology to report.
  report.mode = "http";
  rlcheck::test::describe(report);
  report.transport.reset();
  report.params.topology.reset();
  j = to_json(report);
  CHECK_FALSE(j.at("params").contains("pipeline"));
  CHECK_FALSE(j.at("params").contains("topology"));
  CHECK_FALSE(j.at("summary").contains("redirects"));
  CHECK_FALSE(j.contains("keys_left"));
}

TEST_CASE("to_json runs: stopped_on_errors always, by_node only from a cluster") {
  Report report = sample_report();
  json run = to_json(report).at("runs").at(0);
  CHECK(run.at("stopped_on_errors") == false);
  CHECK_FALSE(run.contains("by_node"));

  report.runs[0].stopped_on_errors = true;
  report.runs[0].by_node = {{"10.0.0.1:6379", 120}, {"10.0.0.2:6379", 80}};
  run = to_json(report).at("runs").at(0);
  CHECK(run.at("stopped_on_errors") == true);
  CHECK(run.at("by_node") == json{{"10.0.0.1:6379", 120}, {"10.0.0.2:6379", 80}});
}

TEST_CASE("to_json summary and checks") {
  const json j = to_json(sample_report());
  const json& summary = j.at("summary");
  CHECK(summary.at("allowed").at("min") == 37);
  CHECK(summary.at("allowed").at("median") == 37.0);
  CHECK(summary.at("allowed").at("max") == 37);
  CHECK(summary.at("runs_over_limit") == 1);
  CHECK(summary.at("requests_per_second") == 16'200.0);
  CHECK(summary.at("script_reloads") == 2);
  const json& checks = j.at("checks");
  REQUIRE(checks.size() == 3);
  CHECK(checks[0] ==
        json{{"id", "limit"}, {"status", "fail"}, {"detail", "1 of 1 runs over the limit"}});
  CHECK(checks[1].at("status") == "skip");
  CHECK(checks[2].at("status") == "pass");
}

TEST_CASE("to_json survives a dump and parse round trip") {
  const json j = to_json(sample_report());
  CHECK(json::parse(j.dump()) == j);
}

TEST_CASE("compare_to_json wraps one report per target") {
  Report second = sample_report();
  second.target.strategy = "sliding-window";
  rlcheck::test::describe(second);
  const json j = compare_to_json({sample_report(), second}, 1);
  CHECK(j.at("schema") == "rlcheck.compare/v1");
  CHECK(j.at("tool").at("name") == "rlcheck");
  CHECK(j.at("exit_code") == 1);
  REQUIRE(j.at("reports").size() == 2);
  CHECK(j.at("reports")[0].at("schema") == "rlcheck.report/v1");
  CHECK(j.at("reports")[1].at("target").at("strategy") == "sliding-window");
}

TEST_CASE("compare_to_json carries the worst verdict and the exit code at the top") {
  Report passing = sample_report();
  passing.verdict = Verdict::pass;
  CHECK(compare_to_json({passing, passing}, 0).at("verdict") == "pass");
  CHECK(compare_to_json({passing, sample_report()}, 1).at("verdict") == "fail");
  Report errored = sample_report();
  errored.verdict = Verdict::error;
  CHECK(compare_to_json({errored, sample_report()}, 3).at("verdict") == "error");
  Report interrupted = sample_report();
  interrupted.verdict = Verdict::interrupted;
  interrupted.interrupted = true;
  const json j = compare_to_json({errored, interrupted}, 130);
  CHECK(j.at("verdict") == "interrupted");
  CHECK(j.at("exit_code") == 130);
  CHECK(j.at("reports")[1].at("verdict") == "interrupted");
}

TEST_CASE("to_json reports p999 latency") {
  Report report = sample_report();
  report.runs[0].latency.p999 = 3.9;
  CHECK(to_json(report).at("runs")[0].at("latency_ms").at("p999") == 3.9);
}

TEST_CASE("to_json runs[].faults: window, during counts, recovery; applied and error if not") {
  Report report = sample_report();
  CHECK_FALSE(to_json(report)["runs"][0].contains("faults"));
  rlcheck::checks::FaultWindow pause;
  pause.spec = "pause@1s+1s";
  pause.at_ns = 1'000'250'000;
  pause.until_ns = 2'000'250'000;
  pause.applied = true;
  pause.during_allowed = 1;
  pause.during_denied = 12;
  pause.during_errors = 3;
  pause.recovered_after_ns = 35'123'456;
  rlcheck::checks::FaultWindow late = pause;
  late.spec = "restart@9s";
  late.applied = false;
  late.error = "the run ended first";
  late.recovered_after_ns.reset();
  report.runs[0].faults = {pause, late};
  const json faults = to_json(report)["runs"][0]["faults"];
  REQUIRE(faults.size() == 2);
  CHECK(faults[0] == json::parse(R"({"spec": "pause@1s+1s", "at_ms": 1000.25, "until_ms": 2000.25,
      "during": {"allowed": 1, "denied": 12, "errors": 3}, "recovered_after_ms": 35.123})"));
  CHECK(faults[1]["applied"] == false);
  CHECK(faults[1]["error"] == "the run ended first");
  CHECK(faults[1]["recovered_after_ms"].is_null());
}

TEST_CASE("to_json many hosts: workers[] and the session, with who was lost and who merged") {
  Report report = sample_report();
  CHECK_FALSE(to_json(report).contains("workers"));
  report.workers.emplace();
  report.workers->session = "ci-42";
  report.workers->clock_uncertainty_ms = 0.05;
  report.workers->list = {{0, "host-a", 0, 0.5, 0.02, true, 1},
                          {1, "host-b", 60, -0.25, 0.03, false, 0}};
  report.workers->lost = "worker 0 (host-a) stopped answering during run 1";
  report.workers->merged_by = 1;
  const json out = to_json(report);
  REQUIRE(out["workers"].size() == 2);
  CHECK(out["workers"][0] == json({{"index", 0},
                                   {"host", "host-a"},
                                   {"requests", 0},
                                   {"clock_offset_ms", 0.5},
                                   {"clock_uncertainty_ms", 0.02},
                                   {"lost", true},
                                   {"lost_in_run", 1}}));
  CHECK_FALSE(out["workers"][1].contains("lost"));
  CHECK(out["session"] == json({{"id", "ci-42"},
                                {"clock_uncertainty_ms", 0.05},
                                {"lost", report.workers->lost},
                                {"merged_by", 1}}));
}

TEST_CASE("to_json unknown: per run and summed in the summary, 0 when none") {
  Report report = sample_report();
  CHECK(to_json(report).at("summary").at("unknown") == 0);
  CHECK(to_json(report).at("runs").at(0).at("unknown") == 0);
  report.runs[0].unknown = 4;
  report.runs.push_back(report.runs[0]);
  report.runs[1].unknown = 3;
  const json j = to_json(report);
  CHECK(j.at("runs").at(0).at("unknown") == 4);
  CHECK(j.at("runs").at(1).at("unknown") == 3);
  CHECK(j.at("summary").at("unknown") == 7);
}

TEST_CASE("to_json runs: the limiter's clock against rlcheck's, where it was read") {
  Report report = sample_report();
  REQUIRE_FALSE(report.runs.empty());
  CHECK_FALSE(to_json(report).at("runs").at(0).contains("limiter_clock"));
  report.runs[0].limiter_clock =
      rlcheck::engine::ClockDrift{"Redis TIME", 4'000'000, 2'000'000'000, 200'000, 4'200'000};
  const json clock = to_json(report).at("runs").at(0).at("limiter_clock");
  CHECK(clock == json{{"source", "Redis TIME"},
                      {"ahead_ms", 4.0},
                      {"over_ms", 2000.0},
                      {"uncertainty_ms", 0.2},
                      {"slack_ms", 4.2}});
}
