#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "checks/checks.hpp"
#include "checks/time_checks.hpp"

using rlcheck::checks::AdmissionPeak;
using rlcheck::checks::check_contract;
using rlcheck::checks::check_retry_accuracy;
using rlcheck::checks::check_retry_honest;
using rlcheck::checks::check_utilisation;
using rlcheck::checks::CheckParams;
using rlcheck::checks::HintError;
using rlcheck::checks::RetryVerification;
using rlcheck::checks::RunStats;
using rlcheck::checks::Status;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A run whose worst span held `count` admissions in 730 ms where `allowance` were allowed.
RunStats audited(int number, int64_t count, double allowance) {
  RunStats stats;
  stats.run = number;
  stats.contract.worst = AdmissionPeak{count, allowance, 2'000'000, 730'000'000};
  stats.contract.worst_identity = 3;
  return stats;
}

}  // namespace

TEST_CASE("contract fails on the run with the worst span and locates it") {
  CheckParams params;
  params.contract = "sliding";
  const auto result = check_contract({audited(1, 10, 10), audited(2, 20, 10)}, params);
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail,
                 "run 2 identity 3: 20 admissions within 730.0ms starting 2.0ms into the run"));
  CHECK(check_contract({audited(1, 10, 10)}, params).status == Status::pass);
  CHECK(check_contract({audited(1, 0, 10)}, params).status == Status::skip);
}

TEST_CASE("a fixed contract reports the boundary burst as information") {
  CheckParams params;
  params.contract = "fixed";
  RunStats run = audited(1, 10, 10);
  run.contract.boundary_burst = AdmissionPeak{19, 10, 0, 650'000'000};
  const auto result = check_contract({run}, params);
  CHECK(result.status == Status::pass);
  CHECK(mentions(result.detail, "boundary burst (worst sliding span) 19 within 650.0ms"));
}

// A run of `span_ms` of sends against a 1 s window, 10 admitted and 40 denied.
RunStats decided_run(int64_t span_ms) {
  RunStats run;
  run.run = 1;
  run.allowed = 10;
  run.denied = 40;
  run.send_span_ns = span_ms * 1'000'000;
  run.memory_ns = 1'000'000'000;
  return run;
}

TEST_CASE("utilisation with --exact fails under 90 percent, even within one window") {
  RunStats run = decided_run(300);
  run.utilisation.admitted = 10;
  run.utilisation.allowed = 50;
  CheckParams params;
  params.exact = true;
  const auto result = check_utilisation({run}, params);
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "admitted 10 of the 50"));
  run.utilisation.admitted = 45;
  CHECK(check_utilisation({run}, params).status == Status::pass);
}

TEST_CASE("utilisation skips single-window runs unless --exact, and judges longer ones") {
  RunStats burst = decided_run(300);
  CheckParams params;
  const auto skipped = check_utilisation({burst}, params);
  CHECK(skipped.status == Status::skip);
  CHECK(mentions(skipped.detail, "within one window (300.0ms <= 1000.0ms)"));

  RunStats open_model = decided_run(2975);
  open_model.lockouts.judged = 80;
  const auto passed = check_utilisation({burst, open_model}, params);
  CHECK(passed.status == Status::pass);
  CHECK(mentions(passed.detail, "80 denials judged, none while the window had room"));

  // Without --exact a low ratio alone is no failure: only a denial the window had room for is.
  open_model.utilisation.admitted = 10;
  open_model.utilisation.allowed = 30;
  CHECK(check_utilisation({open_model}, params).status == Status::pass);
  open_model.lockouts.count = 3;
  open_model.lockouts.worst = rlcheck::checks::LockOut{2, 57, 1'250'000'000, 0, 10, {}};
  const auto failed = check_utilisation({open_model}, params);
  CHECK(failed.status == Status::fail);
  CHECK(mentions(failed.detail,
                 "run 1 identity 2: request 57 sent 1250.0ms into the run was "
                 "denied while the window had room (0 of 10 used)"));
  CHECK(mentions(failed.detail, "3 of 80 denials judged came with room"));
}

TEST_CASE("a sliding-counter contract reports the most in a true sliding window") {
  CheckParams params;
  params.contract = "sliding-counter";
  params.limit = 10;
  RunStats run = audited(1, 18, 19);
  run.contract.sliding_window = AdmissionPeak{17, 10, 0, 910'000'000};
  const auto result = check_contract({run}, params);
  CHECK(result.status == Status::pass);
  CHECK(mentions(result.detail, "sliding-counter contract, worst span"));
  CHECK(mentions(result.detail,
                 "most in a true sliding window 17 within 910.0ms in run 1 (a "
                 "sliding-window counter may admit up to twice its limit 10"));
  CHECK(check_contract({audited(1, 20, 19)}, params).status == Status::fail);
}

TEST_CASE("utilisation names denial counting where a run showed it") {
  CheckParams params;
  params.limit = 10;
  params.window_ms = 1000;
  RunStats run = decided_run(2975);
  run.lockouts.judged = 110;
  run.lockouts.count = 79;
  run.lockouts.worst = rlcheck::checks::LockOut{0, 50, 1'250'000'000, 0, 10, {}};
  CHECK_FALSE(mentions(check_utilisation({run}, params).detail, "denial counting"));
  run.lockouts.denial_counting = rlcheck::checks::DenialCounting{0, 225'500'000, 110, 40.0};
  const auto result = check_utilisation({run}, params);
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail,
                 "denial counting: run 1 identity 0 was never admitted again after 225.5ms "
                 "although it kept sending (110 denied at 40/s"));
  CHECK(mentions(result.detail,
                 "a client offering more than 10 per 1s (this one offered 40/s) "
                 "stays locked out while it keeps asking"));
  // What it saw, not a cause it did not measure: both readings of it are named.
  CHECK(mentions(result.detail, "counts its own denials"));
  CHECK(mentions(result.detail, "or whose state never ages"));
  // An hour's window, as a person reads it.
  params.window_ms = 3'600'000;
  CHECK(mentions(check_utilisation({run}, params).detail, "more than 10 per 1h "));
}

TEST_CASE("a hint 1000 times the wait, or a thousandth of it, names the unit mixed up") {
  RunStats run;
  run.run = 1;
  run.retry_accuracy.resolutions = {1};
  run.retry_accuracy.finer_hints_whole_seconds = false;
  // Told 1500000 ms where 1500 were left: milliseconds sent where seconds are read.
  run.retry_accuracy.errors = {HintError{0, 7, 0, 1'500'000, 1'498'500, 1}};
  run.retry_accuracy.late = 1;
  CheckParams params;
  params.retry_tolerance.window_ms = 2000;
  CHECK(mentions(check_retry_accuracy({run}, params).detail,
                 "(the wait was 1500ms: 1000x less, milliseconds where seconds are read?)"));
  // Told 2 ms where 2000 were left: seconds where milliseconds are read.
  run.retry_accuracy.errors = {HintError{0, 7, 0, 2, -1998, 1}};
  run.retry_accuracy.late = 0;
  run.retry_accuracy.early = 1;
  CHECK(mentions(check_retry_accuracy({run}, params).detail,
                 "(the wait was 2000ms: 1000x more, seconds where milliseconds are read?)"));
  // Merely late: nothing named.
  run.retry_accuracy.errors = {HintError{0, 7, 0, 3000, 1000, 1}};
  CHECK_FALSE(mentions(check_retry_accuracy({run}, params).detail, "where"));
}

TEST_CASE("a sliding-window counter's single burst is within two windows") {
  RunStats burst = decided_run(300);
  burst.memory_ns = 2'000'000'000;
  CheckParams params;
  params.contract = "sliding-counter";
  const auto skipped = check_utilisation({burst}, params);
  CHECK(skipped.status == Status::skip);
  CHECK(mentions(skipped.detail, "within two windows (a counter weighs the previous one)"));
}

TEST_CASE("utilisation says so when no request was decided") {
  RunStats refused = decided_run(2000);
  refused.allowed = 0;
  refused.denied = 0;
  const auto result = check_utilisation({refused}, {});
  CHECK(result.status == Status::skip);
  CHECK(mentions(result.detail, "no request was decided"));
}

TEST_CASE("a run that admitted nothing is never a pass") {
  RunStats denied = decided_run(2000);
  denied.requests = 200;
  denied.allowed = 0;
  denied.denied = 200;
  // On state of its own (a fresh key, --reset): the limiter admits nothing.
  CheckParams fresh;
  fresh.fresh_state = true;
  const auto proven = check_utilisation({denied}, fresh);
  CHECK(proven.status == Status::fail);
  CHECK_FALSE(proven.inconclusive);
  CHECK(mentions(proven.detail,
                 "run 1 admitted none of its 200 requests (200 denied, the first "
                 "one too) on limiter state of its own"));
  // On an identity an earlier test may have used up: no verdict either way, and no pass.
  CheckParams reused;
  reused.identity_note = "{run} is the same in every invocation";
  const auto unknown = check_utilisation({denied}, reused);
  CHECK(unknown.status == Status::fail);
  CHECK(unknown.inconclusive);
  CHECK(mentions(unknown.detail,
                 "or the identity was used up before the test ({run} is the same "
                 "in every invocation); nothing admitted is no pass"));
  CHECK(rlcheck::checks::verdict_of({unknown}) == rlcheck::checks::Verdict::error);
  // A request that may have been admitted unseen, or a fault, leaves the rule out.
  RunStats unseen = denied;
  unseen.unknown = 1;
  CHECK_FALSE(check_utilisation({unseen}, fresh).inconclusive);
  CHECK(check_utilisation({unseen}, fresh).detail.find("admitted none") == std::string::npos);
  RunStats one = denied;
  one.allowed = 1;
  CHECK(check_utilisation({one}, fresh).detail.find("admitted none") == std::string::npos);
}

TEST_CASE("retry-after-accuracy fails on early or late hints and names the worst") {
  RunStats run;
  run.run = 2;
  run.retry_accuracy.errors = {HintError{0, 7, 0, 1000, -10}, HintError{1, 9, 0, 60'000, 55'000}};
  CheckParams params;
  CHECK(check_retry_accuracy({run}, params).status == Status::pass);
  run.retry_accuracy.late = 1;
  const auto result = check_retry_accuracy({run}, params);
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "run 2 identity 1 request 9 told 60000ms, off by 55000ms"));
  CHECK(check_retry_accuracy({RunStats{}}, params).status == Status::skip);
}

TEST_CASE("retry-after-accuracy prints the tolerance each hint resolution was judged with") {
  RunStats run;
  run.run = 1;
  run.retry_accuracy.errors = {HintError{0, 7, 0, 450, -450, 1}};
  run.retry_accuracy.resolutions = {1};
  run.retry_accuracy.early = 1;
  run.retry_accuracy.finer_hints_whole_seconds = false;  // 450 ms is no whole second
  CheckParams params;
  params.retry_tolerance.window_ms = 1000;
  const auto halved = check_retry_accuracy({run}, params);
  CHECK(halved.status == Status::fail);
  CHECK(mentions(halved.detail, "1 hint early by > 2ms, 0 late by > 2ms; worst: run 1"));
  CHECK(mentions(halved.detail, "(millisecond hints: early tolerance 2ms, late 2ms)"));

  // Whole seconds are early only by the clocks (a hint is a minimum), late by max(1 s, 10 % of
  // W).
  RunStats seconds;
  seconds.retry_accuracy.errors = {HintError{0, 7, 0, 1000, 400, 1000}};
  seconds.retry_accuracy.resolutions = {1000};
  params.retry_tolerance.window_ms = 60'000;
  const auto rounded = check_retry_accuracy({seconds}, params);
  CHECK(rounded.status == Status::pass);
  CHECK(mentions(rounded.detail, "(whole-second hints: early tolerance 8ms, late 6s)"));

  // Both in one report: each resolution's tolerance, finest first.
  const auto both = check_retry_accuracy({run, seconds}, params);
  CHECK(both.status == Status::fail);
  CHECK(mentions(both.detail, "1 hint early, 0 late beyond their tolerance"));
  CHECK(mentions(both.detail,
                 "(millisecond hints: early tolerance 8ms, late 8ms; whole-second "
                 "hints: early tolerance 8ms, late 6s)"));
}

TEST_CASE("retry-after-accuracy says why a script's hints were judged as whole seconds") {
  RunStats run;
  run.run = 1;
  run.retry_accuracy.errors = {HintError{0, 7, 0, 2000, 500, 1}};
  run.retry_accuracy.resolutions = {1};
  run.retry_accuracy.late = 1;
  CheckParams params;
  params.retry_tolerance.window_ms = 1500;
  params.hint_resolution = rlcheck::config::HintResolution::milliseconds;
  const auto strict = check_retry_accuracy({run}, params);
  CHECK(strict.status == Status::fail);
  CHECK(mentions(strict.detail,
                 "judged to the millisecond as --hint-resolution 1ms asks (auto "
                 "or 1s judges them as whole seconds)"));

  rlcheck::checks::judge_as_whole_seconds(run.retry_accuracy, params.retry_tolerance);
  params.hint_resolution = rlcheck::config::HintResolution::auto_detect;
  const auto inferred = check_retry_accuracy({run}, params);
  CHECK(inferred.status == Status::pass);
  CHECK(mentions(inferred.detail,
                 "(whole-second hints: early tolerance 2ms, late 1s; every hint a "
                 "multiple of 1000ms, so --hint-resolution auto judged them as "
                 "whole seconds)"));
  params.hint_resolution = rlcheck::config::HintResolution::seconds;
  CHECK(mentions(check_retry_accuracy({run}, params).detail, "as --hint-resolution 1s asks"));

  // A hint that is not a whole second is judged to the millisecond without a word about it.
  run.retry_accuracy = {};
  run.retry_accuracy.errors = {HintError{0, 7, 0, 1500, 0, 1}};
  run.retry_accuracy.resolutions = {1};
  run.retry_accuracy.finer_hints_whole_seconds = false;
  params.hint_resolution = rlcheck::config::HintResolution::milliseconds;
  CHECK_FALSE(mentions(check_retry_accuracy({run}, params).detail, "--hint-resolution"));
}

TEST_CASE("retry-after-honest passes when the retry was allowed, fails when denied") {
  CheckParams params;
  CHECK(check_retry_honest(params, std::nullopt).status == Status::skip);
  params.verify_retry_after = true;
  RetryVerification verification;
  verification.skip_reason = "no identity ended run 1 denied";
  CHECK(check_retry_honest(params, verification).status == Status::skip);
  verification.attempted = true;
  verification.allowed = true;
  verification.told_ms = 1000;
  verification.waited_ms = 1001;
  verification.outcome = "allowed";
  CHECK(check_retry_honest(params, verification).status == Status::pass);
  verification.allowed = false;
  verification.outcome = "denied again";
  const auto result = check_retry_honest(params, verification);
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "told 1000ms; retried after 1001ms: denied again"));
}
