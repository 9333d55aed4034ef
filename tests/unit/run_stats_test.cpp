#include <doctest/doctest.h>

#include <string>

#include "checks/run_stats.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::RunStats;
using rlcheck::checks::summarize_run;
using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::engine::RunResult;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord allowed(int64_t sent_ns) {
  RequestRecord r;
  r.outcome = Outcome::allowed;
  r.sent_ns = sent_ns;
  r.replied_ns = sent_ns + 100;
  return r;
}

RequestRecord denied(std::optional<int64_t> retry_ms, bool hint_expected) {
  RequestRecord r;
  r.outcome = Outcome::denied;
  r.retry_ms = retry_ms;
  r.hint_expected = hint_expected;
  return r;
}

RequestRecord errored(ErrorKind kind) {
  RequestRecord r;
  r.outcome = Outcome::error;
  r.error = kind;
  return r;
}

AdmissionRule sliding_rule(int64_t limit) {
  AdmissionRule rule;
  rule.limit = limit;
  rule.window_ns = 1'000 * k_ms;
  return rule;
}

rlcheck::checks::AuditParams audit_of(const AdmissionRule& rule) {
  rlcheck::checks::AuditParams audit;
  audit.rule = rule;
  audit.max_retry_after_ms = 60'000;
  return audit;
}

}  // namespace

TEST_CASE("summarize_run counts outcomes and carries the run number and duration") {
  RunResult result;
  for (int i = 0; i < 3; ++i)
    result.records.push_back(allowed(i * 10));
  result.records.push_back(denied(std::nullopt, false));
  result.records.push_back(errored(ErrorKind::timeout));
  result.duration_ns = 1'500 * k_ms;
  result.interrupted = true;

  const RunStats stats = summarize_run(4, result, audit_of(sliding_rule(10)));
  CHECK(stats.run == 4);
  CHECK(stats.requests == 5);
  CHECK(stats.allowed == 3);
  CHECK(stats.denied == 1);
  CHECK(stats.errors == 1);
  CHECK(stats.duration_ms == doctest::Approx(1'500.0));
  CHECK(stats.interrupted);
}

TEST_CASE("retry hints: present, negative, over the bound, min and max") {
  RunResult result;
  result.records = {denied(500, true), denied(-5, true), denied(90'000, true), denied(2'000, true)};
  const RunStats stats = summarize_run(1, result, audit_of(sliding_rule(10)));
  CHECK(stats.retry.expected);
  CHECK(stats.retry.present == 4);
  CHECK(stats.retry.missing == 0);
  CHECK(stats.retry.invalid == 1);
  CHECK(stats.retry.over_bound == 1);
  CHECK(stats.retry.min_ms == -5);
  CHECK(stats.retry.max_ms == 90'000);
}

TEST_CASE("a denial whose reply had a hint slot but no hint is missing") {
  RunResult result;
  result.records = {denied(1'000, true), denied(std::nullopt, true)};
  const RunStats stats = summarize_run(1, result, audit_of(sliding_rule(10)));
  CHECK(stats.retry.present == 1);
  CHECK(stats.retry.missing == 1);
}

TEST_CASE("silent denials count as missing once the limiter gave hints elsewhere") {
  RunResult result;
  result.records = {denied(std::nullopt, false), denied(1'000, false), denied(std::nullopt, false)};
  const RunStats stats = summarize_run(1, result, audit_of(sliding_rule(10)));
  CHECK(stats.retry.expected);
  CHECK(stats.retry.present == 1);
  CHECK(stats.retry.missing == 2);
}

TEST_CASE("a limiter that never gives hints expects none and misses none") {
  RunResult result;
  result.records = {denied(std::nullopt, false), denied(std::nullopt, false)};
  const RunStats stats = summarize_run(1, result, audit_of(sliding_rule(10)));
  CHECK_FALSE(stats.retry.expected);
  CHECK(stats.retry.missing == 0);
  CHECK(stats.retry.present == 0);
  CHECK_FALSE(stats.retry.min_ms.has_value());
}

TEST_CASE("errors are counted by kind name, with a sample message per kind") {
  RunResult result;
  result.records = {errored(ErrorKind::timeout), errored(ErrorKind::timeout),
                    errored(ErrorKind::bad_reply)};
  result.error_samples[ErrorKind::bad_reply] = "script returned string \"ok\"";
  const RunStats stats = summarize_run(1, result, audit_of(sliding_rule(10)));
  CHECK(stats.errors == 3);
  CHECK(stats.error_kinds.at("timeout") == 2);
  CHECK(stats.error_kinds.at("bad-reply") == 1);
  CHECK(stats.error_kinds.size() == 2);
  CHECK(stats.error_samples.at("bad-reply") == "script returned string \"ok\"");
}

TEST_CASE("latency percentiles are in milliseconds") {
  RunResult result;
  for (int64_t ms = 1; ms <= 100; ++ms)
    result.latency_ns.record(ms * k_ms);
  const RunStats stats = summarize_run(1, result, audit_of(sliding_rule(10)));
  CHECK(stats.latency.p50 >= 50.0);
  CHECK(stats.latency.p50 < 50.0 * 65.0 / 64.0);
  CHECK(stats.latency.p90 >= 90.0);
  CHECK(stats.latency.p90 < 90.0 * 65.0 / 64.0);
  CHECK(stats.latency.p99 >= 99.0);
  CHECK(stats.latency.max == doctest::Approx(100.0));
}

TEST_CASE("the peak is measured against the rule") {
  RunResult result;
  for (int i = 0; i < 12; ++i)
    result.records.push_back(allowed(i * 1'000));
  CHECK(summarize_run(1, result, audit_of(sliding_rule(10))).peak.exceeded());
  CHECK(summarize_run(1, result, audit_of(sliding_rule(10))).peak.count == 12);
  CHECK_FALSE(summarize_run(1, result, audit_of(sliding_rule(12))).peak.exceeded());
}

TEST_CASE("--hint-resolution: auto judges as whole seconds only when every run's hints were") {
  using rlcheck::config::HintResolution;
  const rlcheck::checks::AccuracyTolerance tolerance{1000};
  const auto runs_of = [](bool second_run_whole) {
    std::vector<RunStats> runs(2);
    for (RunStats& run : runs) {
      run.retry_accuracy.errors.push_back({0, 10, 0, 1000, 100, 1});
      run.retry_accuracy.late = 1;
      run.retry_accuracy.resolutions = {1};
      run.retry_accuracy.instants_off_second_grid = true;
    }
    runs[1].retry_accuracy.finer_hints_whole_seconds = second_run_whole;
    return runs;
  };
  auto whole = runs_of(true);
  CHECK(rlcheck::checks::settle_hint_resolution(whole, HintResolution::auto_detect, tolerance));
  for (const RunStats& run : whole) {
    CHECK(run.retry_accuracy.late == 0);
    CHECK(run.retry_accuracy.resolutions == std::vector<int32_t>{1000});
  }
  // One run with a hint that is not a whole second: every run keeps milliseconds.
  auto mixed = runs_of(false);
  CHECK_FALSE(
      rlcheck::checks::settle_hint_resolution(mixed, HintResolution::auto_detect, tolerance));
  CHECK(mixed[0].retry_accuracy.late == 1);
  CHECK(mixed[0].retry_accuracy.resolutions == std::vector<int32_t>{1});
  // Whole-second hints from instants all a whole number of seconds apart (a virtual clock at
  // 1/s) say nothing of their unit: milliseconds stay.
  auto on_grid = runs_of(true);
  for (RunStats& run : on_grid)
    run.retry_accuracy.instants_off_second_grid = false;
  CHECK_FALSE(
      rlcheck::checks::settle_hint_resolution(on_grid, HintResolution::auto_detect, tolerance));
  CHECK(on_grid[0].retry_accuracy.late == 1);
  // 1s judges whole seconds whatever the hints; 1ms never does.
  auto forced = runs_of(false);
  CHECK(rlcheck::checks::settle_hint_resolution(forced, HintResolution::seconds, tolerance));
  CHECK(forced[1].retry_accuracy.late == 0);
  auto kept = runs_of(true);
  CHECK_FALSE(
      rlcheck::checks::settle_hint_resolution(kept, HintResolution::milliseconds, tolerance));
  CHECK(kept[0].retry_accuracy.late == 1);
}

TEST_CASE("a limiter clock proven fast is allowed for: a correct window seen short passes") {
  // A sliding window of 10 a second whose clock ran 4 ms ahead during the run: its eleventh
  // admission came a full window after the first on its clock, 996 ms on rlcheck's.
  RunResult result;
  for (int i = 0; i < 10; ++i)
    result.records.push_back(allowed(i * 10 * k_ms));
  result.records.push_back(allowed(996 * k_ms));
  CHECK(summarize_run(1, result, audit_of(sliding_rule(10))).peak.exceeded());

  result.limiter_clock = rlcheck::engine::drift_between(
      "Redis TIME", {0, 0, 50'000}, {1'500 * k_ms + 4 * k_ms, 1'500 * k_ms, 50'000});
  REQUIRE(result.limiter_clock->slack_ns == 4 * k_ms + 100'000);
  const RunStats stats = summarize_run(1, result, audit_of(sliding_rule(10)));
  CHECK_FALSE(stats.peak.exceeded());
  REQUIRE(stats.limiter_clock.has_value());
  CHECK(stats.limiter_clock->source == "Redis TIME");

  // Twice the limit is no clock's doing: it still fails with the allowance.
  for (int i = 0; i < 10; ++i)
    result.records.push_back(allowed(500 * k_ms + i * k_ms));
  CHECK(summarize_run(1, result, audit_of(sliding_rule(10))).peak.exceeded());
}

TEST_CASE("a clock drift the readings' uncertainty or the assumed rate explains changes nothing") {
  using rlcheck::engine::drift_between;
  // 100 ppm of 10 s is 1 ms: 0.9 ms ahead is within the assumption.
  CHECK(drift_between("w", {0, 0, 0}, {10'000 * k_ms + 900'000, 10'000 * k_ms, 0}).slack_ns == 0);
  // 1.5 ms ahead, but the readings are uncertain by 0.3 ms each: 0.9 ms is all that is sure.
  CHECK(drift_between("w", {0, 0, 300'000}, {10'000 * k_ms + 1'500'000, 10'000 * k_ms, 300'000})
            .slack_ns == 0);
  // Beyond both: the whole difference and its uncertainty, whichever way the clock went.
  CHECK(drift_between("w", {0, 0, 100'000}, {10'000 * k_ms + 3 * k_ms, 10'000 * k_ms, 100'000})
            .slack_ns == 3 * k_ms + 200'000);
  const auto behind =
      drift_between("w", {0, 0, 100'000}, {10'000 * k_ms - 3 * k_ms, 10'000 * k_ms, 100'000});
  CHECK(behind.ahead_ns == -3 * k_ms);
  CHECK(behind.slack_ns == 3 * k_ms + 200'000);
  // A step forward and back again within the run nets to nothing at its ends; the readings
  // in between show it.
  rlcheck::engine::ClockTrack track({0, 0, 50'000});
  track.add({1'000 * k_ms + 20 * k_ms, 1'000 * k_ms, 50'000});
  track.add({2'000 * k_ms, 2'000 * k_ms, 50'000});
  const auto back = track.drift("wall");
  CHECK(back.ahead_ns == 0);
  CHECK(back.over_ns == 2'000 * k_ms);
  CHECK(back.slack_ns == 20 * k_ms + 100'000);
  // Of two clocks, the one with the larger allowance is the one the audits take.
  const auto wall = drift_between("wall", {0, 0, 0}, {1'000 * k_ms, 1'000 * k_ms, 0});
  CHECK(rlcheck::engine::worse_drift(wall, behind)->source == "w");
  CHECK(rlcheck::engine::worse_drift(std::nullopt, wall)->source == "wall");
}

TEST_CASE("leases released by the run: each admission in progress to its release's reply") {
  // Admitted 0..1 ms, 2..3 ms and 4..5 ms with a hold of 300 ms: the first released (its reply
  // at 400 ms), the second's release failed, the third's never logged; a denial at 10..11 ms.
  rlcheck::engine::RecordLog records;
  for (uint64_t seq = 0; seq < 3; ++seq) {
    RequestRecord r;
    r.seq = seq;
    r.outcome = Outcome::allowed;
    r.sent_ns = static_cast<int64_t>(seq) * 2 * k_ms;
    r.replied_ns = r.sent_ns + k_ms;
    records.push_back(r);
  }
  RequestRecord denial;
  denial.seq = 3;
  denial.outcome = Outcome::denied;
  denial.sent_ns = 10 * k_ms;
  denial.replied_ns = 11 * k_ms;
  records.push_back(denial);
  rlcheck::checks::place_leases(records, {{0, 400 * k_ms}, {1, INT64_MAX}}, 300 * k_ms);
  CHECK(records[0].replied_ns == 400 * k_ms);
  // Failed or unlogged: held past every reply.
  CHECK(records[1].replied_ns == 400 * k_ms + 1);
  CHECK(records[2].replied_ns == 400 * k_ms + 1);
  CHECK(records[3].replied_ns == 11 * k_ms);  // a denial keeps its reply
  // Never less than the hold after the acquire's reply, whatever was logged.
  rlcheck::engine::RecordLog early;
  early.push_back(records[0]);
  RequestRecord first = early[0];
  first.replied_ns = k_ms;
  early.set(0, first);
  rlcheck::checks::place_leases(early, {{0, 100 * k_ms}}, 300 * k_ms);
  CHECK(early[0].replied_ns == 301 * k_ms);
}
