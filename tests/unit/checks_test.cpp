#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "checks/checks.hpp"

using rlcheck::checks::CheckParams;
using rlcheck::checks::CheckResult;
using rlcheck::checks::evaluate_checks;
using rlcheck::checks::RunStats;
using rlcheck::checks::Status;
using rlcheck::checks::status_name;
using rlcheck::checks::Verdict;
using rlcheck::checks::verdict_name;
using rlcheck::checks::verdict_of;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A run that admitted `allowed` of 200, with that many in its worst span.
RunStats run(int number, int64_t allowed) {
  RunStats stats;
  stats.run = number;
  stats.requests = 200;
  stats.allowed = allowed;
  stats.denied = 200 - allowed;
  stats.peak.count = allowed;
  stats.peak.allowance = 10;
  return stats;
}

CheckResult check(const std::vector<RunStats>& runs, const std::string& id,
                  const CheckParams& params = {}) {
  for (CheckResult& result : evaluate_checks(runs, params)) {
    if (result.id == id)
      return result;
  }
  FAIL("no check ", id);
  return {};
}

}  // namespace

TEST_CASE("every check is reported once, under its stable id") {
  const auto results = evaluate_checks({run(1, 10)}, {});
  std::vector<std::string> ids;
  for (const auto& r : results)
    ids.push_back(r.id);
  CHECK(ids == std::vector<std::string>{"limit", "contract", "delay", "exact", "utilisation",
                                        "retry-after-present", "retry-after-valid",
                                        "retry-after-bound", "retry-after-accuracy",
                                        "retry-after-honest", "remaining", "key-ttl", "fail-mode",
                                        "recovery", "errors"});
}

TEST_CASE("limit passes when no run's peak exceeds its allowance") {
  const CheckResult r = check({run(1, 10), run(2, 9)}, "limit");
  CHECK(r.status == Status::pass);
  CHECK(mentions(r.detail, "10"));
  CHECK(verdict_of(evaluate_checks({run(1, 10), run(2, 9)}, {})) == Verdict::pass);
}

TEST_CASE("limit fails naming how many runs were over, the first one and the max") {
  const CheckResult r = check({run(1, 10), run(2, 14), run(3, 19)}, "limit");
  CHECK(r.status == Status::fail);
  CHECK(mentions(r.detail, "2 of 3 runs over"));
  CHECK(mentions(r.detail, "run 2 allowed 14"));
  CHECK(mentions(r.detail, "max 19"));
  CHECK(verdict_of(evaluate_checks({run(1, 10), run(2, 14)}, {})) == Verdict::fail);
}

TEST_CASE("limit says how long its worst span lasted in plain milliseconds or seconds") {
  RunStats short_span = run(1, 14);
  short_span.peak.length_ns = 21'340'000;
  CHECK(mentions(check({short_span}, "limit").detail, "within 21.3ms"));
  RunStats long_span = run(1, 14);
  long_span.peak.length_ns = 4'656'000'000;
  const std::string detail = check({long_span}, "limit").detail;
  CHECK(mentions(detail, "within 4.66s"));
  CHECK_FALSE(mentions(detail, "e+"));
}

TEST_CASE("limit is skipped without runs") {
  CHECK(check({}, "limit").status == Status::skip);
}

TEST_CASE("exact is skipped without --exact, and checks min(limit, requests) with it") {
  CHECK(check({run(1, 3)}, "exact").status == Status::skip);

  CheckParams exact;
  exact.exact = true;
  CHECK(check({run(1, 10), run(2, 12)}, "exact", exact).status == Status::pass);

  const CheckResult under = check({run(1, 10), run(2, 7)}, "exact", exact);
  CHECK(under.status == Status::fail);
  CHECK(mentions(under.detail, "run 2 allowed 7"));

  exact.requests = 5;  // fewer requests than the limit: all of them must pass
  CHECK(check({run(1, 5)}, "exact", exact).status == Status::pass);
  CHECK(check({run(1, 4)}, "exact", exact).status == Status::fail);
}

TEST_CASE("exact: requests that may have been admitted unseen may make up a shortfall") {
  CheckParams exact;
  exact.exact = true;
  RunStats short_of_three = run(1, 7);
  short_of_three.errors = 3;
  short_of_three.unknown = 3;
  CHECK(check({short_of_three}, "exact", exact).status == Status::pass);
  short_of_three.unknown = 2;  // one of the errors never left
  const CheckResult under = check({short_of_three}, "exact", exact);
  CHECK(under.status == Status::fail);
  CHECK(mentions(under.detail, "with 2 unknown"));
}

TEST_CASE("retry-after-present is skipped without denials or when no hints are expected") {
  RunStats all_allowed = run(1, 10);
  all_allowed.denied = 0;
  CHECK(check({all_allowed}, "retry-after-present").status == Status::skip);

  RunStats no_hints = run(1, 10);  // denials, from a limiter without a hint slot
  CHECK(check({no_hints}, "retry-after-present").status == Status::skip);
}

TEST_CASE("retry-after-present passes when every denial had a hint and fails when one did not") {
  RunStats hinted = run(1, 10);
  hinted.retry.expected = true;
  hinted.retry.present = hinted.denied;
  CHECK(check({hinted}, "retry-after-present").status == Status::pass);

  RunStats missing = run(2, 10);
  missing.retry.expected = true;
  missing.retry.present = missing.denied - 3;
  missing.retry.missing = 3;
  const CheckResult r = check({hinted, missing}, "retry-after-present");
  CHECK(r.status == Status::fail);
  CHECK(mentions(r.detail, "3 of 380"));
  CHECK(mentions(r.detail, "run 2"));
}

TEST_CASE("retry-after-valid fails on negative hints") {
  RunStats runs = run(1, 10);
  CHECK(check({runs}, "retry-after-valid").status == Status::skip);

  runs.retry.present = 5;
  CHECK(check({runs}, "retry-after-valid").status == Status::pass);

  runs.retry.invalid = 2;
  const CheckResult r = check({runs}, "retry-after-valid");
  CHECK(r.status == Status::fail);
  CHECK(mentions(r.detail, "2 of 5"));
  CHECK(mentions(r.detail, "negative"));
}

TEST_CASE("retry-after-bound fails on hints above the bound, naming the largest") {
  RunStats runs = run(1, 10);
  CHECK(check({runs}, "retry-after-bound").status == Status::skip);

  CheckParams params;
  params.max_retry_after_ms = 1'000;
  runs.retry.present = 4;
  runs.retry.max_ms = 900;
  CHECK(check({runs}, "retry-after-bound", params).status == Status::pass);

  runs.retry.over_bound = 1;
  runs.retry.max_ms = 86'400'000;
  const CheckResult r = check({runs}, "retry-after-bound", params);
  CHECK(r.status == Status::fail);
  CHECK(mentions(r.detail, "86400000ms"));
  CHECK(mentions(r.detail, "1000ms"));
}

TEST_CASE("key-ttl fails naming the key left without a TTL") {
  RunStats clean = run(1, 10);
  clean.key_ttls = {{"rl:app:user41", 900}};
  RunStats leaky = run(2, 10);
  leaky.keys_without_ttl = {"rl:app:user42"};
  CHECK(check({clean}, "key-ttl").status == Status::pass);

  const CheckResult r = check({clean, leaky}, "key-ttl");
  CHECK(r.status == Status::fail);
  CHECK(mentions(r.detail, "rl:app:user42"));
  CHECK(mentions(r.detail, "run 2"));

  CheckParams no_keys;
  no_keys.key_ttl_applies = false;
  CHECK(check({leaky}, "key-ttl", no_keys).status == Status::skip);
}

TEST_CASE("errors above --max-errors fail with a sample, and make the verdict error") {
  RunStats erring = run(1, 10);
  erring.errors = 3;
  erring.error_samples["timeout"] = "no reply within 5s";
  const CheckResult r = check({erring}, "errors");
  CHECK(r.status == Status::fail);
  CHECK(mentions(r.detail, "3 errored"));
  CHECK(mentions(r.detail, "no reply within 5s"));
  CHECK(verdict_of(evaluate_checks({erring}, {})) == Verdict::error);

  CheckParams tolerant;
  tolerant.max_errors = 3;
  CHECK(check({erring}, "errors", tolerant).status == Status::pass);
}

TEST_CASE("errors of a status that reads as a denial name the flag that accepts it") {
  // A 503 with Retry-After (nginx's default deny status).
  RunStats hinted = run(1, 10);
  hinted.denied = 0;
  hinted.errors = 40;
  hinted.error_kinds["status-503"] = 40;
  hinted.hinted_status_errors["status-503"] = 40;
  CHECK(mentions(check({hinted}, "errors").detail, "pass --denied-status 503"));
  // Beside 429 denials, the flag keeps them.
  hinted.denied = 5;
  CHECK(mentions(check({hinted}, "errors").detail, "--denied-status 429,503"));

  // A 403 making most errors of a run that admitted, without a hint.
  RunStats forbidden = run(1, 10);
  forbidden.errors = 30;
  forbidden.error_kinds["status-403"] = 30;
  CHECK(mentions(check({forbidden}, "errors").detail, "--denied-status 429,403"));

  // A 500 is no denial.
  RunStats failing = run(1, 10);
  failing.errors = 30;
  failing.error_kinds["status-500"] = 30;
  CHECK_FALSE(mentions(check({failing}, "errors").detail, "--denied-status"));
}

TEST_CASE("errors of a run stopped on them say that no more requests were sent") {
  RunStats stopped = run(1, 10);
  stopped.errors = 1;
  stopped.stopped_on_errors = true;
  const CheckResult r = check({stopped}, "errors");
  CHECK(r.status == Status::fail);
  CHECK(mentions(r.detail, "1 errored request > --max-errors 0; no more requests were sent"));
}

TEST_CASE("errors during an applied fault are left to fail-mode and recovery") {
  RunStats faulted = run(1, 10);
  faulted.errors = 5;
  rlcheck::checks::FaultWindow pause;
  pause.spec = "pause@1s+1s";
  pause.applied = true;
  pause.during_errors = 4;
  faulted.faults.push_back(pause);
  CheckParams tolerant;
  tolerant.max_errors = 1;
  const CheckResult r = check({faulted}, "errors", tolerant);
  CHECK(r.status == Status::pass);
  CHECK(mentions(r.detail, "1 errored request outside faults"));
  CHECK(mentions(r.detail, "4 during faults"));

  faulted.errors = 7;  // 3 outside the fault: more than --max-errors 1
  const CheckResult over = check({faulted}, "errors", tolerant);
  CHECK(over.status == Status::fail);
  CHECK(mentions(over.detail, "3 errored requests besides 4 during faults > --max-errors 1"));

  faulted.faults.front().applied = false;  // not applied: every error counts
  CHECK(check({faulted}, "errors", tolerant).status == Status::fail);
  CHECK(mentions(check({faulted}, "errors", tolerant).detail, "7 errored requests > "));
}

TEST_CASE("the verdict is error when errors failed, even beside other failures") {
  std::vector<CheckResult> checks{{"limit", Status::fail, "over"},
                                  {"errors", Status::fail, "3 errored"},
                                  {"key-ttl", Status::pass, ""}};
  CHECK(verdict_of(checks) == Verdict::error);
  CHECK(verdict_of({{"limit", Status::fail, ""}, {"exact", Status::skip, ""}}) == Verdict::fail);
  CHECK(verdict_of({{"limit", Status::pass, ""}, {"exact", Status::skip, ""}}) == Verdict::pass);
  CHECK(verdict_of({}) == Verdict::pass);
}

TEST_CASE("status and verdict names") {
  CHECK(std::string(status_name(Status::pass)) == "pass");
  CHECK(std::string(status_name(Status::fail)) == "fail");
  CHECK(std::string(status_name(Status::skip)) == "skip");
  CHECK(std::string(verdict_name(Verdict::pass)) == "pass");
  CHECK(std::string(verdict_name(Verdict::fail)) == "fail");
  CHECK(std::string(verdict_name(Verdict::error)) == "error");
}

TEST_CASE("admission checks skip, not pass, when no request was decided") {
  // Every connection refused: nothing was allowed or denied, so "max allowed 0 <= limit 10"
  // would be a pass on no evidence.
  RunStats refused = run(1, 0);
  refused.denied = 0;
  refused.errors = 200;
  CheckParams exact;
  exact.exact = true;
  for (const std::string id : {"limit", "exact", "contract", "utilisation", "retry-after-present",
                               "retry-after-valid", "retry-after-bound", "retry-after-accuracy"}) {
    CAPTURE(id);
    const CheckResult r = check({refused}, id, exact);
    CHECK(r.status == Status::skip);
  }
  CHECK(mentions(check({refused}, "limit").detail, "no request was decided"));
  CHECK(mentions(check({refused}, "exact", exact).detail, "no request was decided"));
  // One run decided, one did not: the decided one is judged.
  CHECK(check({refused, run(2, 10)}, "limit").status == Status::pass);
  CHECK(check({refused, run(2, 11)}, "limit").status == Status::fail);
}

TEST_CASE(
    "errors alone are no test: tolerated by --max-errors, they still make the verdict error") {
  RunStats refused = run(1, 0);
  refused.denied = 0;
  refused.errors = 200;
  CheckParams tolerant;
  tolerant.max_errors = 1000;
  const CheckResult r = check({refused}, "errors", tolerant);
  CHECK(r.status == Status::fail);
  CHECK(mentions(r.detail, "no request was decided"));
  CHECK(verdict_of(evaluate_checks({refused}, tolerant)) == Verdict::error);
  // One decided request is a test: the tolerated errors around it pass.
  RunStats some = refused;
  some.allowed = 1;
  CHECK(check({some}, "errors", tolerant).status == Status::pass);
}
