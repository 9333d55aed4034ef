#include "report/junit_report.hpp"
#include "shared/report_description.hpp"

#include <doctest/doctest.h>

#include <string>

using rlcheck::checks::CheckResult;
using rlcheck::checks::RetryVerification;
using rlcheck::checks::RunStats;
using rlcheck::checks::Status;
using rlcheck::report::junit_suite_of;
using rlcheck::report::JunitCase;
using rlcheck::report::JunitSuite;
using rlcheck::report::render_junit;
using rlcheck::report::Report;

namespace {

// Two runs of 1.5 s and 0.5 s; four checks, one of them skipped.
Report two_runs() {
  Report report;
  report.mode = "redis";
  rlcheck::test::describe(report);
  report.target.strategy = "sliding-window";
  rlcheck::test::describe(report);
  report.params.runs = 2;
  for (const double ms : {1500.0, 500.0}) {
    RunStats run;
    run.duration_ms = ms;
    report.runs.push_back(run);
  }
  report.checks = {CheckResult{"limit", Status::pass, "10 allowed"},
                   CheckResult{"exact", Status::skip, "without --exact"},
                   CheckResult{"retry-after-present", Status::fail, "2 denials without a hint"},
                   CheckResult{"retry-after-honest", Status::pass, "allowed after 1000ms"}};
  return report;
}

const JunitCase* case_named(const JunitSuite& suite, const std::string& name) {
  for (const JunitCase& testcase : suite.cases) {
    if (testcase.name == name)
      return &testcase;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("junit: only judged checks are testcases; --junit-skipped brings the skipped back") {
  const JunitSuite judged = junit_suite_of(two_runs(), "rlcheck redis sliding-window");
  CHECK(judged.cases.size() == 3);
  CHECK(case_named(judged, "exact") == nullptr);
  const std::string xml = render_junit({judged});
  CHECK(xml.find("skipped=\"0\"") != std::string::npos);
  CHECK(xml.find("<skipped") == std::string::npos);

  const JunitSuite all = junit_suite_of(two_runs(), "rlcheck redis sliding-window", true);
  CHECK(all.cases.size() == 4);
  REQUIRE(case_named(all, "exact") != nullptr);
  CHECK(case_named(all, "exact")->status == JunitCase::Status::skip);
  const std::string with_skipped = render_junit({all});
  CHECK(with_skipped.find("<skipped message=\"without --exact\"/>") != std::string::npos);
  CHECK(with_skipped.find("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\"") !=
        std::string::npos);
}

TEST_CASE("junit: each judged check is timed with its share of the runs; skipped ones 0") {
  Report report = two_runs();
  const JunitSuite suite = junit_suite_of(report, "s", true);
  CHECK(suite.time_s == doctest::Approx(2.0));
  // 2 s of runs over 3 judged checks.
  CHECK(case_named(suite, "limit")->time_s == doctest::Approx(2.0 / 3));
  CHECK(case_named(suite, "retry-after-present")->time_s == doctest::Approx(2.0 / 3));
  CHECK(case_named(suite, "exact")->time_s == 0);
  const std::string xml = render_junit({suite});
  CHECK(xml.find("<testcase name=\"limit\" classname=\"rlcheck.redis.sliding-window\" "
                 "time=\"0.667\"") != std::string::npos);
  CHECK(xml.find("<testcase name=\"exact\" classname=\"rlcheck.redis.sliding-window\" "
                 "time=\"0.000\"") != std::string::npos);

  // --verify-retry-after's wait is the suite's too, and the check it decides holds it.
  RetryVerification verification;
  verification.attempted = true;
  verification.waited_ms = 1000;
  verification.allowed = true;
  report.retry_verification = verification;
  const JunitSuite verified = junit_suite_of(report, "s");
  CHECK(verified.time_s == doctest::Approx(3.0));
  CHECK(case_named(verified, "retry-after-honest")->time_s == doctest::Approx(2.0 / 3 + 1));
  double sum = 0;
  for (const JunitCase& testcase : verified.cases)
    sum += testcase.time_s;
  CHECK(sum == doctest::Approx(verified.time_s));
}

TEST_CASE("junit: an interrupted test adds a failing testcase, untimed") {
  Report report = two_runs();
  report.interrupted = true;
  report.params.runs = 4;
  const JunitSuite suite = junit_suite_of(report, "s");
  const JunitCase* interrupted = case_named(suite, "interrupted");
  REQUIRE(interrupted != nullptr);
  CHECK(interrupted->status == JunitCase::Status::fail);
  CHECK(interrupted->message == "interrupted after 2 of 4 runs; partial results");
  CHECK(interrupted->time_s == 0);
}
