#pragma once
// --summary-md: a Markdown summary for pull requests and GitHub's job summary
// ($GITHUB_STEP_SUMMARY), as k6's summary export gives: a title with the verdict, a table of
// checks per target (id, status, detail), then what failed in full, each failing check naming
// `rlcheck explain ID`, and the command that reproduces it. Pure.

#include <string>
#include <string_view>
#include <vector>

#include "checks/checks.hpp"
#include "report/report.hpp"

namespace rlcheck::report {

// One target's table (a strategy, a script, an endpoint; in rlcheck run, a scenario).
struct SummarySection {
  std::string name;     // the heading
  std::string outcome;  // the heading's verdict: "PASS", "FAIL", "expected fail, got fail"
  bool ok = true;       // what was asked of it held: its failing checks are not listed below
  std::string context;  // a line under the heading (the contract and the load); may be empty
  std::vector<checks::CheckResult> checks;
  // Why it is not ok beyond its failing checks (interrupted, an expectation not met); listed
  // with its failures.
  std::string problem;
  std::string reproduce;  // the command that runs it again; empty: the summary's
};

struct MarkdownSummary {
  std::string title;    // "rlcheck redis"
  std::string verdict;  // "PASS", "FAIL", "ERROR", "INTERRUPTED", "2 of 3 scenarios ..."
  bool ok = true;
  std::vector<SummarySection> sections;
  std::string reproduce;  // the command line, shown once under the failures when not ok
};

// The section of one judged target: its checks, the verdict as the human report words it, and,
// when interrupted, what was left unjudged.
SummarySection summary_section(const Report& report, std::string name);

// A verdict as a heading shows it: "PASS", "FAIL", "ERROR", "INTERRUPTED".
std::string verdict_heading(checks::Verdict verdict);

std::string render_summary_markdown(const MarkdownSummary& summary);

// Text that Markdown shows as it is: its punctuation (\ ` * _ [ ] < > | ~ &) escaped with a
// backslash; newlines stay.
std::string markdown_escape(std::string_view text);
// The same for a table cell: newlines as <br>, carriage returns dropped.
std::string markdown_cell(std::string_view text);

}  // namespace rlcheck::report
