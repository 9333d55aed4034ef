#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "report/human_report.hpp"

using rlcheck::checks::Status;
using rlcheck::checks::Verdict;
using rlcheck::report::render_human;
using rlcheck::report::Report;
using rlcheck::report::TextStyle;
using rlcheck::report::verdict_line;

namespace {

Report report_with(std::vector<rlcheck::checks::CheckResult> checks, Verdict verdict) {
  Report report;
  report.target.url = "redis://127.0.0.1:6379";
  report.target.strategy = "naive";
  report.params.limit = 10;
  report.params.window_ms = 60'000;
  report.checks = std::move(checks);
  report.verdict = verdict;
  return report;
}

}  // namespace

TEST_CASE("verdict_line is PASS when nothing failed") {
  const Report r = report_with(
      {{"limit", Status::pass, "max allowed 10 <= limit 10"}, {"exact", Status::skip, ""}},
      Verdict::pass);
  CHECK(verdict_line(r) == "PASS");
}

TEST_CASE("verdict_line names the first failing check and its detail") {
  const Report r = report_with({{"limit", Status::pass, "fine"},
                                {"retry-after-valid", Status::fail, "2 of 5 retry hints"},
                                {"key-ttl", Status::fail, "key rl:x has no TTL"}},
                               Verdict::fail);
  CHECK(verdict_line(r) == "FAIL: retry-after-valid: 2 of 5 retry hints");
}

TEST_CASE("verdict_line says ERROR when the verdict is error") {
  const Report r =
      report_with({{"errors", Status::fail, "run 1 had 3 errored requests"}}, Verdict::error);
  CHECK(verdict_line(r) == "ERROR: errors: run 1 had 3 errored requests");
}

TEST_CASE("verdict_line says an interrupted run is partial, whatever failed") {
  Report r = report_with({{"limit", Status::fail, "over"}}, Verdict::fail);
  r.interrupted = true;
  CHECK(verdict_line(r).starts_with("INTERRUPTED"));
}

TEST_CASE("render_human --quiet is the verdict line alone, colored only on request") {
  const Report r = report_with({{"limit", Status::fail, "over"}}, Verdict::fail);
  CHECK(render_human(r, TextStyle{false, true}) == "FAIL: limit: over\n");
  const std::string colored = render_human(r, TextStyle{true, true});
  CHECK(colored.find("\033[") != std::string::npos);
  CHECK(colored.find("FAIL: limit: over") != std::string::npos);
}

TEST_CASE("render_human lists every check and ends with the verdict") {
  const Report r = report_with(
      {{"limit", Status::pass, "max allowed 9 <= limit 10"}, {"exact", Status::skip, "without"}},
      Verdict::pass);
  const std::string text = render_human(r, TextStyle{false, false});
  CHECK(text.find("\033[") == std::string::npos);
  CHECK(text.find("max allowed 9 <= limit 10") != std::string::npos);
  CHECK(text.find("exact") != std::string::npos);
  CHECK(text.ends_with("PASS\n"));
}
