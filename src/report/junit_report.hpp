#pragma once
// JUnit XML for CI systems (GitHub, GitLab, Jenkins): one testsuite per report or scenario,
// one testcase per judged check (skipped ones too with --junit-skipped), failures carrying the
// figure that decided them.
//
// Time: a suite's is the time its test took (the runs, and --verify-retry-after's wait). The
// checks all judge the same runs, so each judged check is given an even share of the runs'
// time, and retry-after-honest the retry's wait besides: the testcases add up to the suite, as
// CI systems that total the testcases expect. A skipped check judged nothing (time 0), nor
// does the "interrupted" testcase.

#include <string>
#include <string_view>
#include <vector>

#include "report/report.hpp"

namespace rlcheck::report {

struct JunitCase {
  enum class Status { pass, fail, skip };
  std::string name;       // the check id, or "expectation"
  std::string classname;  // "rlcheck.redis.sliding-window"
  Status status = Status::pass;
  std::string message;  // failure or skip reason
  std::string output;   // system-out, for passing cases worth a word
  double time_s = 0;    // its share of the test's time (see above)
};

struct JunitSuite {
  std::string name;
  double time_s = 0;
  std::vector<JunitCase> cases;
};

// The checks of `report` as a suite named `name`, the skipped ones only `with_skipped`; an
// interrupted report adds a failing testcase "interrupted".
JunitSuite junit_suite_of(const Report& report, const std::string& name, bool with_skipped = false);
std::string render_junit(const std::vector<JunitSuite>& suites);

// Text for XML attributes and elements: & < > " ' escaped, characters XML 1.0 forbids
// (control bytes but tab, newline and carriage return) replaced by '?'.
std::string xml_escape(std::string_view text);

}  // namespace rlcheck::report
