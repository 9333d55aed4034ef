#include "report/junit_report.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace rlcheck::report {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        const auto byte = static_cast<unsigned char>(c);
        out.push_back(byte < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : c);
    }
  }
  return out;
}

JunitSuite junit_suite_of(const Report& report, const std::string& name, bool with_skipped) {
  JunitSuite suite;
  suite.name = name;
  double runs_s = 0;
  for (const auto& run : report.runs)
    runs_s += run.duration_ms / 1000.0;
  // The wait --verify-retry-after made before its retry, after the runs.
  const double retry_s =
      report.retry_verification && report.retry_verification->attempted
          ? static_cast<double>(std::max<int64_t>(0, report.retry_verification->waited_ms)) / 1000.0
          : 0;
  suite.time_s = runs_s + retry_s;
  const auto judged = std::ranges::count_if(report.checks, [](const checks::CheckResult& check) {
    return check.status != checks::Status::skip;
  });
  const double share_s = judged > 0 ? runs_s / static_cast<double>(judged) : 0;
  const std::string& subject = report.target.name;
  for (const auto& check : report.checks) {
    if (check.status == checks::Status::skip && !with_skipped)
      continue;
    JunitCase testcase;
    testcase.name = check.id;
    testcase.classname = fmt::format("rlcheck.{}.{}", report.mode, subject);
    testcase.message = check.detail;
    if (check.status != checks::Status::skip)
      testcase.time_s = share_s + (check.id == "retry-after-honest" ? retry_s : 0);
    switch (check.status) {
      case checks::Status::pass:
        testcase.status = JunitCase::Status::pass;
        testcase.output = check.detail;
        testcase.message.clear();
        break;
      case checks::Status::fail:
        testcase.status = JunitCase::Status::fail;
        break;
      case checks::Status::skip:
        testcase.status = JunitCase::Status::skip;
        break;
    }
    suite.cases.push_back(std::move(testcase));
  }
  if (report.interrupted) {
    // Not a pass: the checks above judged only what ran before Ctrl-C.
    JunitCase testcase;
    testcase.name = "interrupted";
    testcase.classname = fmt::format("rlcheck.{}.{}", report.mode, subject);
    testcase.status = JunitCase::Status::fail;
    testcase.message = fmt::format("interrupted after {} of {} runs; partial results",
                                   report.runs.size(), report.params.runs);
    suite.cases.push_back(std::move(testcase));
  }
  return suite;
}

std::string render_junit(const std::vector<JunitSuite>& suites) {
  size_t tests = 0, failures = 0, skipped = 0;
  double time_s = 0;
  for (const JunitSuite& suite : suites) {
    tests += suite.cases.size();
    time_s += suite.time_s;
    for (const JunitCase& testcase : suite.cases) {
      failures += testcase.status == JunitCase::Status::fail;
      skipped += testcase.status == JunitCase::Status::skip;
    }
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"rlcheck\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"{:.3f}\">\n",
      tests, failures, skipped, time_s);
  for (const JunitSuite& suite : suites) {
    size_t suite_failures = 0, suite_skipped = 0;
    for (const JunitCase& testcase : suite.cases) {
      suite_failures += testcase.status == JunitCase::Status::fail;
      suite_skipped += testcase.status == JunitCase::Status::skip;
    }
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
        "time=\"{:.3f}\">\n",
        xml_escape(suite.name), suite.cases.size(), suite_failures, suite_skipped, suite.time_s);
    for (const JunitCase& testcase : suite.cases) {
      out +=
          fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3f}\"",
                      xml_escape(testcase.name), xml_escape(testcase.classname), testcase.time_s);
      if (testcase.status == JunitCase::Status::pass && testcase.output.empty()) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (testcase.status == JunitCase::Status::fail) {
        out += fmt::format("      <failure message=\"{}\" type=\"check\">{}</failure>\n",
                           xml_escape(testcase.message), xml_escape(testcase.message));
      } else if (testcase.status == JunitCase::Status::skip) {
        out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(testcase.message));
      }
      if (!testcase.output.empty()) {
        out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(testcase.output));
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace rlcheck::report
