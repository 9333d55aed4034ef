#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "report/html_compare.hpp"
#include "report/html_report.hpp"
#include "shared/report_description.hpp"

using rlcheck::checks::Status;
using rlcheck::checks::Verdict;
using rlcheck::report::Report;

namespace {

Report target(const std::string& strategy, Verdict verdict) {
  Report report;
  report.mode = "redis";
  rlcheck::test::describe(report);
  report.target.url = "redis://127.0.0.1:6379";
  rlcheck::test::describe(report);
  report.target.strategy = strategy;
  rlcheck::test::describe(report);
  report.params.limit = 10;
  report.params.window_ms = 1000;
  report.summary.allowed_min = 10;
  report.summary.allowed_median = 15;
  report.summary.allowed_max = 20;
  report.summary.runs_over_limit = verdict == Verdict::fail ? 2 : 0;
  report.summary.requests_per_second = 39.6;
  report.runs.resize(3);
  report.runs[0].latency.p50 = 0.25;
  report.runs[1].latency.p99 = 1.5;
  report.runs[2].retry.min_ms = 500;
  report.runs[2].retry.max_ms = 1000;
  report.checks = {{"limit", verdict == Verdict::fail ? Status::fail : Status::pass, ""},
                   {"contract", verdict == Verdict::fail ? Status::fail : Status::pass, ""}};
  report.verdict = verdict;
  return report;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

}  // namespace

TEST_CASE("html compare: the targets side by side at the top, a row each, as the terminal") {
  const std::vector<Report> reports{target("fixed-window", Verdict::fail),
                                    target("sliding-window", Verdict::pass)};
  const std::string html = rlcheck::report::render_compare_html(reports);
  const size_t table = html.find("<table class=\"compare\">");
  REQUIRE(table != std::string::npos);
  CHECK(table < html.find("id=\"report-1\""));  // before the targets' own sections
  const std::string rows = html.substr(table, html.find("</table>", table) - table);
  CHECK(count_of(rows, "<tr class=\"target ") == 2);
  for (const char* column : {"<th>strategy</th>", ">allowed min/med/max</th>", ">over</th>",
                             ">retry hint s</th>", ">p50 ms</th>", ">p99 ms</th>", ">req/s</th>",
                             "<th>verdict</th>", "<th>failed checks</th>"}) {
    CHECK_MESSAGE(rows.find(column) != std::string::npos, column);
  }
  CHECK(rows.find("<th>limit</th>") == std::string::npos);  // strategies share theirs
  const size_t fixed = rows.find("<tr class=\"target fail\"><td class=\"name\">fixed-window</td>");
  const size_t sliding =
      rows.find("<tr class=\"target pass\"><td class=\"name\">sliding-window</td>");
  REQUIRE(fixed != std::string::npos);
  REQUIRE(sliding != std::string::npos);
  CHECK(fixed < sliding);
  const std::string failing = rows.substr(fixed, sliding - fixed);
  CHECK(failing.find(">10/15/20</td>") != std::string::npos);
  CHECK(failing.find(">2/3</td>") != std::string::npos);
  CHECK(failing.find(">0.500-1.000</td>") != std::string::npos);
  CHECK(failing.find(">0.250</td>") != std::string::npos);  // p50 of the slowest run
  CHECK(failing.find(">1.50</td>") != std::string::npos);
  CHECK(failing.find(">40</td>") != std::string::npos);  // req/s
  CHECK(failing.find("<span class=\"badge fail\">fail</span>") != std::string::npos);
  CHECK(failing.find("<td class=\"failed\">limit, contract</td>") != std::string::npos);
  const std::string passing = rows.substr(sliding);
  CHECK(passing.find(">0/3</td>") != std::string::npos);
  CHECK(passing.find("<td class=\"failed\">-</td>") != std::string::npos);
  // A run's page, not a comparison, has no such table.
  CHECK(rlcheck::report::render_html(reports).find("class=\"compare\"") == std::string::npos);
}

TEST_CASE("html compare: endpoints get their own limit column, text escaped") {
  Report a = target("", Verdict::pass);
  a.mode = "http";
  rlcheck::test::describe(a);
  a.target.url = "http://127.0.0.1:8080/a?x=<1>&y";
  rlcheck::test::describe(a);
  a.params.limit_source = "advertised";
  Report b = a;
  b.target.url = "http://127.0.0.1:8080/b";
  rlcheck::test::describe(b);
  b.params.limit_source = "default";
  b.interrupted = true;
  const std::string html = rlcheck::report::html::compare_table_html({a, b});
  CHECK(html.find("<th>endpoint</th><th>limit</th>") != std::string::npos);
  CHECK(html.find("<td class=\"name\">http://127.0.0.1:8080/a?x=&lt;1&gt;&amp;y</td>"
                  "<td class=\"limit\">10/1s adv</td>") != std::string::npos);
  CHECK(html.find("<td class=\"limit\">10/1s def</td>") != std::string::npos);
  CHECK(html.find("<tr class=\"target interrupted\">") != std::string::npos);
  CHECK(html.find("<x") == std::string::npos);
  CHECK(rlcheck::report::html::compare_table_html({}).empty());
}
