#include <doctest/doctest.h>

#include <string>
#include <vector>

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

TEST_CASE("utilisation needs --exact and fails under 90 percent") {
  RunStats run;
  run.run = 1;
  run.utilisation.admitted = 10;
  run.utilisation.allowed = 50;
  CheckParams params;
  CHECK(check_utilisation({run}, params).status == Status::skip);
  params.exact = true;
  const auto result = check_utilisation({run}, params);
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "admitted 10 of the 50"));
  run.utilisation.admitted = 45;
  CHECK(check_utilisation({run}, params).status == Status::pass);
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
