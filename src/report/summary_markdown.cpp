#include "report/summary_markdown.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "report/human_report.hpp"

namespace rlcheck::report {
namespace {

constexpr std::string_view k_punctuation = "\\`*_[]<>|~&";

const char* mark(bool ok) {
  return ok ? "✅" : "❌";
}

std::string status_text(const checks::CheckResult& check) {
  switch (check.status) {
    case checks::Status::pass:
      return check.warning ? "⚠️ warning" : "✅ pass";
    case checks::Status::fail:
      return "❌ fail";
    case checks::Status::skip:
      return "⏭ skip";
  }
  return "❌ fail";
}

// The longest run of `c` in `text`.
size_t longest_run(std::string_view text, char c) {
  size_t longest = 0, run = 0;
  for (const char x : text) {
    run = x == c ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// `text` as inline code: the fence one backtick longer than any run inside it.
std::string code_span(std::string_view text) {
  const std::string fence(longest_run(text, '`') + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  return fmt::format("{0}{1}{2}{1}{0}", fence, pad ? " " : "", text);
}

// `text` as a fenced block of `language`: a fence longer than any run of backticks inside.
std::string code_block(std::string_view language, std::string_view text) {
  const std::string fence(std::max<size_t>(3, longest_run(text, '`') + 1), '`');
  return fmt::format("{0}{1}\n{2}\n{0}\n", fence, language, text);
}

// `text` as a quote, every line of it, kept apart by hard breaks.
std::string block_quote(std::string_view text) {
  std::string out = "> ";
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    std::string line(text.substr(start, end == std::string_view::npos ? end : end - start));
    std::erase(line, '\r');
    out += markdown_escape(line);
    if (end == std::string_view::npos)
      break;
    out += "\\\n> ";
    start = end + 1;
  }
  return out + "\n";
}

std::string table(const std::vector<checks::CheckResult>& checks) {
  if (checks.empty())
    return "No checks were judged.\n";
  std::string out = "| check | status | detail |\n| --- | --- | --- |\n";
  for (const checks::CheckResult& check : checks) {
    out += fmt::format("| {} | {} | {} |\n", code_span(check.id), status_text(check),
                       markdown_cell(check.detail));
  }
  return out;
}

// A section that did not hold: its failing checks in full, why else it did not, and how to
// run it again.
std::string failures_of(const SummarySection& section) {
  std::string out = fmt::format("#### {}\n\n", markdown_escape(section.name));
  for (const checks::CheckResult& check : section.checks) {
    if (check.status != checks::Status::fail)
      continue;
    out += fmt::format("**{}** ❌ (what it means: {})\n\n", code_span(check.id),
                       code_span("rlcheck explain " + check.id));
    out += block_quote(check.detail) + "\n";
  }
  if (!section.problem.empty())
    out += block_quote(section.problem) + "\n";
  if (!section.reproduce.empty())
    out += "Reproduce:\n\n" + code_block("sh", section.reproduce) + "\n";
  return out;
}

}  // namespace

std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (k_punctuation.find(c) != std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : markdown_escape(text)) {
    if (c == '\n')
      out += "<br>";
    else if (c != '\r')
      out += c;
  }
  return out;
}

std::string verdict_heading(checks::Verdict verdict) {
  std::string word = checks::verdict_name(verdict);
  std::ranges::transform(word, word.begin(), [](unsigned char c) { return std::toupper(c); });
  return word;
}

SummarySection summary_section(const Report& report, std::string name) {
  SummarySection section;
  section.name = std::move(name);
  section.ok = report.verdict == checks::Verdict::pass && !report.interrupted;
  section.outcome =
      verdict_heading(report.interrupted ? checks::Verdict::interrupted : report.verdict);
  section.context = header_line(report);
  section.checks = report.checks;
  const bool failed_check = std::ranges::any_of(
      report.checks, [](const checks::CheckResult& c) { return c.status == checks::Status::fail; });
  if (report.interrupted) {
    section.problem = fmt::format("interrupted after {} of {} runs; partial results",
                                  report.runs.size(), report.params.runs);
  } else if (!section.ok && !failed_check) {
    section.problem = verdict_line(report);
  }
  return section;
}

std::string render_summary_markdown(const MarkdownSummary& summary) {
  std::string out = fmt::format("## {} {}: {}\n\n", mark(summary.ok),
                                markdown_escape(summary.title), markdown_escape(summary.verdict));
  for (const SummarySection& section : summary.sections) {
    out += fmt::format("### {} {}: {}\n\n", mark(section.ok), markdown_escape(section.name),
                       markdown_escape(section.outcome));
    if (!section.context.empty())
      out += code_span(section.context) + "\n\n";
    out += table(section.checks) + "\n";
  }
  const bool failed = std::ranges::any_of(
      summary.sections, [](const SummarySection& section) { return !section.ok; });
  if (failed) {
    out += "### Failures\n\n";
    for (const SummarySection& section : summary.sections) {
      if (!section.ok)
        out += failures_of(section);
    }
  }
  if (!summary.ok && !summary.reproduce.empty())
    out += "Reproduce:\n\n" + code_block("sh", summary.reproduce) + "\n";
  // One newline at the end (the heading of a summary appended after it starts its own block).
  while (out.size() > 1 && out.ends_with("\n\n"))
    out.pop_back();
  return out;
}

}  // namespace rlcheck::report
