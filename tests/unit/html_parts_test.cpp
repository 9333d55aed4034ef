// Several contracts in the HTML report: a band per part with its spec, status and worst span,
// each drawable part's limit as a line of its own on the timeline, and nothing of parts on a
// page of one contract. The runs are audited as summarize_run does, so the bands follow the
// audit, not a copy of it.

#include <doctest/doctest.h>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "checks/run_stats.hpp"
#include "report/html_report.hpp"
#include "shared/svg_reading.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::AuditParams;
using rlcheck::checks::ContractPart;
using rlcheck::checks::RunStats;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::engine::RunResult;
using rlcheck::report::render_html;
using rlcheck::report::Report;

namespace {

constexpr int64_t k_ms = 1'000'000;

ContractPart windowed_part(const char* spec, int64_t limit, int64_t window_ms) {
  ContractPart part;
  part.spec = spec;
  part.name = "sliding";
  part.rule.limit = limit;
  part.rule.window_ns = window_ms * k_ms;
  part.rule.clock_ns = k_ms;
  return part;
}

ContractPart bucket_part(const char* spec, int64_t burst, double per_s) {
  ContractPart part;
  part.spec = spec;
  part.name = "token-bucket";
  part.rule.kind = AdmissionRule::Kind::bucket;
  part.rule.burst = burst;
  part.rule.tokens_per_ns = per_s / 1e9;
  part.rule.window_ns = 1000 * k_ms;
  part.rule.clock_ns = k_ms;
  return part;
}

// One identity: 8 admitted in its first 700 ms, then 2 a second for two seconds, every other
// request denied.
RunResult crowded_start() {
  RunResult result;
  uint64_t seq = 0;
  auto add = [&](int64_t sent_ms, Outcome outcome) {
    RequestRecord r;
    r.seq = seq++;
    r.sent_ns = sent_ms * k_ms;
    r.replied_ns = r.sent_ns + k_ms;
    r.outcome = outcome;
    result.records.push_back(r);
  };
  for (int64_t t = 0; t < 800; t += 100)
    add(t, Outcome::allowed);
  for (int64_t t = 1000; t < 3000; t += 250)
    add(t, t % 500 == 0 ? Outcome::allowed : Outcome::denied);
  result.duration_ns = 3000 * k_ms;
  return result;
}

Report report_of_parts(std::vector<ContractPart> parts) {
  AuditParams audit;
  audit.rule = parts.front().rule;
  audit.parts = std::move(parts);
  audit.fresh_state = true;
  audit.timeline = true;
  RunResult result = crowded_start();
  Report report;
  report.mode = "redis";
  report.params.limit = audit.rule.limit;
  report.params.window_ms = audit.rule.window_ns / k_ms;
  report.params.runs = 1;
  report.params.identities = 1;
  for (const ContractPart& part : audit.parts)
    report.params.contracts.push_back(part.spec);
  report.runs.push_back(rlcheck::checks::summarize_run(1, result, audit));
  return report;
}

// The element `tag` whose opening tag holds `marker`, up to its closing tag.
std::string element_with(const std::string& html, const std::string& tag,
                         const std::string& marker) {
  const size_t at = html.find(marker);
  REQUIRE_MESSAGE(at != std::string::npos, "no element with " << marker);
  const size_t start = html.rfind("<" + tag, at);
  const size_t end = html.find("</" + tag + ">", at);
  REQUIRE(start != std::string::npos);
  REQUIRE(end != std::string::npos);
  return html.substr(start, end - start);
}

// The y of the (horizontal) line of class `line_class`.
double line_y_of(const std::string& svg, const std::string& line_class) {
  std::smatch match;
  const std::regex line("<line class=\"" + line_class + "\"[^>]* y1=\"(-?[0-9.]+)\"");
  REQUIRE_MESSAGE(std::regex_search(svg, match, line), "no line." << line_class);
  return std::stod(match[1].str());
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

}  // namespace

TEST_CASE("html parts: a band per part names its spec and status, the exceeded one marked") {
  const Report report = report_of_parts(
      {windowed_part("sliding:5/1s", 5, 1000), windowed_part("sliding:20/1m", 20, 60'000)});
  const RunStats& run = report.runs.front();
  REQUIRE(run.parts.size() == 2);
  // 8 in the first second against 5; 12 in the whole run against 20.
  REQUIRE(run.parts[0].contract.worst.exceeded());
  REQUIRE_FALSE(run.parts[1].contract.worst.exceeded());
  const std::string html = render_html({report});
  CHECK(occurrences(html, "<div class=\"part-band") == 2);

  const std::string first = element_with(html, "div", "id=\"part-1\"");
  CHECK(first.find("<div class=\"part-band exceeded\"") == 0);
  CHECK(first.find(">sliding:5/1s</b>") != std::string::npos);
  CHECK(first.find(">exceeded in run 1</span>") != std::string::npos);
  CHECK(first.find(fmt::format("most {} admitted in", run.parts[0].contract.worst.count)) !=
        std::string::npos);
  CHECK(first.find("against 5 per identity") != std::string::npos);

  const std::string second = element_with(html, "div", "id=\"part-2\"");
  CHECK(second.find("<div class=\"part-band held\"") == 0);
  CHECK(second.find(">sliding:20/1m</b>") != std::string::npos);
  CHECK(second.find(">held</span>") != std::string::npos);
  CHECK(second.find(fmt::format("most {} admitted in", run.parts[1].contract.worst.count)) !=
        std::string::npos);
  CHECK(second.find("against 20 per identity") != std::string::npos);
  CHECK(html.find("div.part-band{") != std::string::npos);  // the bands' style came along
}

TEST_CASE("html parts: a part's limit is drawn only where the timeline counts its window") {
  const Report report =
      report_of_parts({windowed_part("sliding:5/1s", 5, 1000),
                       windowed_part("sliding:20/1m", 20, 60'000), bucket_part("bucket", 10, 5)});
  const std::string html = render_html({report});
  const std::string svg = rlcheck::testing::first_timeline(html);
  // One line per drawable part, none for one contract.
  CHECK(svg.find("class=\"contract-line\"") == std::string::npos);
  CHECK(occurrences(svg, "<line class=\"part-line ") == 2);
  CHECK(svg.find("part-line part-2") == std::string::npos);
  CHECK(svg.find(">sliding:5/1s: 5 per 1s</text>") != std::string::npos);
  // A bucket allows its burst and a window's refill: 10 + 5 in a second.
  CHECK(svg.find(">bucket: 15 per 1s</text>") != std::string::npos);
  const double baseline = line_y_of(svg, "baseline");
  const double five = baseline - line_y_of(svg, "part-line part-1");
  const double fifteen = baseline - line_y_of(svg, "part-line part-3");
  CHECK(fifteen / five == doctest::Approx(3).epsilon(0.02));
  // The undrawn part's band says why.
  const std::string band = element_with(html, "div", "id=\"part-2\"");
  CHECK(band.find("not drawn on the timelines: its window (1m) is not the one they count over "
                  "(1s)") != std::string::npos);
  CHECK(element_with(html, "div", "id=\"part-1\"").find("drawn on the timelines: 5 per 1s") !=
        std::string::npos);
}

TEST_CASE("html parts: a page of one contract has no bands and its single contract line") {
  AuditParams audit;
  audit.rule = windowed_part("", 5, 1000).rule;
  audit.fresh_state = true;
  audit.timeline = true;
  RunResult result = crowded_start();
  Report report;
  report.params.limit = 5;
  report.params.window_ms = 1000;
  report.params.contract = "sliding";
  report.params.runs = 1;
  report.runs.push_back(rlcheck::checks::summarize_run(1, result, audit));
  const std::string html = render_html({report});
  CHECK(html.find("part-band") == std::string::npos);
  CHECK(html.find("<h3>Contracts</h3>") == std::string::npos);
  CHECK(html.find("part-line") == std::string::npos);
  const std::string svg = rlcheck::testing::first_timeline(html);
  CHECK(occurrences(svg, "class=\"contract-line\"") == 1);
  CHECK(svg.find(">contract (sliding): 5 per 1s</text>") != std::string::npos);
}
