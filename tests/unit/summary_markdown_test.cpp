#include "report/summary_markdown.hpp"
#include "shared/report_description.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

using rlcheck::checks::CheckResult;
using rlcheck::checks::Status;
using rlcheck::checks::Verdict;
using rlcheck::report::markdown_cell;
using rlcheck::report::markdown_escape;
using rlcheck::report::MarkdownSummary;
using rlcheck::report::render_summary_markdown;
using rlcheck::report::Report;
using rlcheck::report::summary_section;

namespace {

// A test of `strategy` on a local Redis, 50 requests x 1 run at concurrency 10, limit 10 per 60s.
Report redis_report(const std::string& strategy, std::vector<CheckResult> checks, Verdict verdict) {
  Report report;
  report.mode = "redis";
  rlcheck::test::describe(report);
  report.target.url = "redis://127.0.0.1:6379";
  rlcheck::test::describe(report);
  report.target.strategy = strategy;
  rlcheck::test::describe(report);
  report.params.requests = 50;
  report.params.concurrency = 10;
  report.params.runs = 1;
  report.params.limit = 10;
  report.params.window_ms = 60'000;
  report.checks = std::move(checks);
  report.verdict = verdict;
  return report;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("summary markdown: table cells escape Markdown, a pipe and newlines") {
  CHECK(markdown_cell("a | b") == "a \\| b");
  CHECK(markdown_cell("one\ntwo\r\nthree") == "one<br>two<br>three");
  CHECK(markdown_cell("rlcheck:*:key_ttl [x] <y> ~z & `w`") ==
        "rlcheck:\\*:key\\_ttl \\[x\\] \\<y\\> \\~z \\& \\`w\\`");
  CHECK(markdown_escape("back\\slash\nkept") == "back\\\\slash\nkept");
}

TEST_CASE("summary markdown: a fixed compare renders as the golden file, byte for byte") {
  const Report naive = redis_report(
      "naive",
      {{"limit", Status::fail, "1 of 1 runs over the limit: 50 allowed | limit 10\nworst in run 1"},
       {"exact", Status::skip, "without --exact"},
       {"key-ttl", Status::pass, "keys expire within 2 windows", false, true},
       {"errors", Status::pass, "0 errors"}},
      Verdict::fail);
  const Report lua = redis_report("sliding-window",
                                  {{"limit", Status::pass, "10 allowed per run, limit 10"},
                                   {"exact", Status::skip, "without --exact"},
                                   {"errors", Status::pass, "0 errors"}},
                                  Verdict::pass);
  MarkdownSummary summary;
  summary.title = "rlcheck compare";
  summary.verdict = "FAIL";
  summary.ok = false;
  summary.sections = {summary_section(naive, "naive"), summary_section(lua, "sliding-window")};
  summary.reproduce = "rlcheck compare --strategies naive,lua -n 50 -p 10 -r 1 --seed 7";
  const std::string text = render_summary_markdown(summary);
  const std::string golden = std::string(RLCHECK_FIXTURES) + "/summary_compare.md";
  if (std::getenv("RLCHECK_UPDATE_GOLDEN") != nullptr)
    std::ofstream(golden, std::ios::binary) << text;
  CHECK(text == read_file(golden));
}

TEST_CASE("summary markdown: a pass lists no failures and no reproduce line") {
  const Report lua = redis_report(
      "sliding-window", {{"limit", Status::pass, "10 allowed per run, limit 10"}}, Verdict::pass);
  MarkdownSummary summary;
  summary.title = "rlcheck redis";
  summary.verdict = "PASS";
  summary.sections = {summary_section(lua, "sliding-window")};
  summary.reproduce = "rlcheck redis";
  const std::string text = render_summary_markdown(summary);
  CHECK(text.starts_with("## ✅ rlcheck redis: PASS\n"));
  CHECK(text.find("| `limit` | ✅ pass | 10 allowed per run, limit 10 |") != std::string::npos);
  CHECK(text.find("Failures") == std::string::npos);
  CHECK(text.find("Reproduce") == std::string::npos);
  CHECK(text.ends_with("|\n"));
}

TEST_CASE("summary markdown: an interrupted test is not ok and says what was left") {
  Report lua =
      redis_report("sliding-window", {{"limit", Status::pass, "10 allowed"}}, Verdict::interrupted);
  lua.params.runs = 4;
  lua.interrupted = true;
  lua.runs.resize(1);
  const auto section = summary_section(lua, "sliding-window");
  CHECK_FALSE(section.ok);
  CHECK(section.outcome == "INTERRUPTED");
  CHECK(section.problem == "interrupted after 1 of 4 runs; partial results");
}
