#include <doctest/doctest.h>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/timeline.hpp"
#include "report/html_report.hpp"
#include "shared/report_description.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::CheckResult;
using rlcheck::checks::HintError;
using rlcheck::checks::RunStats;
using rlcheck::checks::Status;
using rlcheck::checks::Verdict;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::report::render_html;
using rlcheck::report::Report;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord record(uint64_t seq, uint32_t identity, int64_t sent_ms, Outcome outcome) {
  RequestRecord r;
  r.seq = seq;
  r.identity = identity;
  r.sent_ns = sent_ms * k_ms;
  r.replied_ns = r.sent_ns + k_ms / 2;
  r.outcome = outcome;
  return r;
}

AdmissionRule sliding(int64_t limit) {
  AdmissionRule rule;
  rule.limit = limit;
  rule.window_ns = 1000 * k_ms;
  return rule;
}

// Identity 0 gets 20 admissions in its first second (twice the limit of 10) then denials;
// identity 1 one admission a second. Timeline and contract as summarize_run would fill them.
RunStats run_of(int number) {
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  for (int64_t t = 0; t < 4000; t += 50) {
    records.push_back(record(seq++, 0, t, t < 1000 ? Outcome::allowed : Outcome::denied));
    if (t % 1000 == 0)
      records.push_back(record(seq++, 1, t + 10, Outcome::allowed));
  }
  records.push_back(record(seq++, 1, 3500, Outcome::error));
  const AdmissionRule rule = sliding(10);
  const auto identities = rlcheck::checks::split_by_identity(records, 2);
  RunStats run;
  run.run = number;
  run.requests = static_cast<int64_t>(records.size());
  run.duration_ms = 4000;
  run.contract = rlcheck::checks::audit_contract(identities, rule);
  run.peak = run.contract.worst;
  run.timeline =
      rlcheck::checks::build_timeline(identities, rule, 4000 * k_ms, run.contract.worst_identity);
  return run;
}

Report report_of(int runs) {
  Report report;
  report.mode = "redis";
  rlcheck::test::describe(report);
  report.target.url = "redis://cache.example:6379/<&>";
  rlcheck::test::describe(report);
  report.target.strategy = "fixed-window";
  rlcheck::test::describe(report);
  report.params.limit = 10;
  report.params.window_ms = 1000;
  report.params.runs = runs;
  report.params.rate = "40/s";
  report.params.duration_ms = 4000;
  report.params.identities = 2;
  report.params.contract = "sliding";
  for (int i = 1; i <= runs; ++i)
    report.runs.push_back(run_of(i));
  report.checks = {{"limit", Status::pass, "max allowed 10 <= limit 10"},
                   {"contract", Status::fail, "<evil attr=\"x\">&co"},
                   {"exact", Status::skip, ""}};
  report.verdict = Verdict::fail;
  return report;
}

// The text of element `tag` whose opening tag contains `marker`, up to its closing tag.
std::string element(const std::string& html, const std::string& tag, const std::string& marker) {
  const size_t at = html.find(marker);
  REQUIRE_MESSAGE(at != std::string::npos, "no element with " << marker);
  const size_t start = html.rfind("<" + tag, at);
  const size_t end = html.find("</" + tag + ">", at);
  REQUIRE(start != std::string::npos);
  REQUIRE(end != std::string::npos);
  return html.substr(start, end - start);
}

// The numeric attribute `name` of the first tag in `text` that contains `marker`.
double attribute(const std::string& text, const std::string& marker, const std::string& name) {
  const size_t at = text.find(marker);
  REQUIRE_MESSAGE(at != std::string::npos, "no tag with " << marker);
  const size_t start = text.rfind('<', at);
  const std::string tag = text.substr(start, text.find('>', at) - start);
  std::smatch match;
  const std::regex pattern(" " + name + "=\"(-?[0-9.]+)\"");
  REQUIRE_MESSAGE(std::regex_search(tag, match, pattern), "no " << name << " in " << tag);
  return std::stod(match[1].str());
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

}  // namespace

TEST_CASE("render_html is one self-contained document: no script, nothing fetched") {
  const std::string html = render_html({report_of(1)});
  CHECK(html.starts_with("<!DOCTYPE html>"));
  CHECK(count_of(html, "</html>") == 1);
  CHECK(html.find("<style>") != std::string::npos);
  for (const char* banned : {"<script", "src=", "href=", "@import", "url(", "<link", "<img",
                             "<iframe", "<object", "<embed"}) {
    CHECK_MESSAGE(html.find(banned) == std::string::npos, banned);
  }
  // The target URL is text the user gave; no other address appears anywhere.
  std::string without_target = html;
  const std::string target = "redis://cache.example:6379/&lt;&amp;&gt;";
  REQUIRE(without_target.find(target) != std::string::npos);
  for (size_t at; (at = without_target.find(target)) != std::string::npos;)
    without_target.erase(at, target.size());
  CHECK(without_target.find("http://") == std::string::npos);
  CHECK(without_target.find("https://") == std::string::npos);
  CHECK(without_target.find("://") == std::string::npos);
}

TEST_CASE("render_html escapes every text it was given") {
  const std::string html = render_html({report_of(1)});
  CHECK(html.find("<evil") == std::string::npos);
  CHECK(html.find("&lt;evil attr=&quot;x&quot;&gt;&amp;co") != std::string::npos);
  CHECK(html.find("6379/<&>") == std::string::npos);
}

TEST_CASE("render_html shows the header, the verdict and a row per check") {
  const std::string html = render_html({report_of(1)});
  CHECK(html.find("10 per 1s") != std::string::npos);
  CHECK(html.find("40/s for 4s &times; 1 run (open model)") != std::string::npos);
  CHECK(html.find("<dt>identities</dt><dd>2</dd>") != std::string::npos);
  CHECK(html.find("class=\"badge fail\"") != std::string::npos);
  CHECK(html.find("<p class=\"verdict fail\">FAIL: contract: ") != std::string::npos);
  const std::string table = element(html, "table", "class=\"checks\"");
  CHECK(count_of(table, "<tr class=") == 3);
  CHECK(table.find("<tr class=\"pass\"><td class=\"mark\">✓</td><td class=\"id\">limit</td>") !=
        std::string::npos);
  CHECK(table.find("<tr class=\"fail\"><td class=\"mark\">✗</td><td class=\"id\">contract</td>") !=
        std::string::npos);
  CHECK(table.find("<tr class=\"skip\"><td class=\"mark\">-</td><td class=\"id\">exact</td>") !=
        std::string::npos);
}

TEST_CASE("render_html names a run stopped on errors and the keys left behind") {
  Report report = report_of(1);
  CHECK(render_html({report}).find("<dt>stopped</dt>") == std::string::npos);
  CHECK(render_html({report}).find("keys left behind") == std::string::npos);
  report.params.requests = 160;
  report.runs[0].stopped_on_errors = true;
  report.keys_left = {"rlcheck:ab:<k>"};
  const std::string html = render_html({report});
  CHECK(html.find("<dt>stopped</dt><dd>run 1 on errors, after 85 of 160 requests</dd>") !=
        std::string::npos);
  CHECK(html.find("<dt>keys left behind</dt><dd>rlcheck:ab:&lt;k&gt;</dd>") != std::string::npos);
}

TEST_CASE("a timeline per run and shown identity, with bars, the window line and the contract") {
  const Report report = report_of(1);
  const std::string html = render_html({report});
  CHECK(count_of(html, "<svg class=\"timeline\"") == 2);
  const std::string worst = element(html, "svg", "id=\"run-1-identity-0\"");
  const std::string other = element(html, "svg", "id=\"run-1-identity-1\"");
  CHECK(worst.find("width=\"900\" height=\"220\"") != std::string::npos);
  // 20 allowed bins, 60 denied bins for identity 0: one subpath each.
  const std::string allowed_tag = worst.substr(worst.find("class=\"bars-allowed\""));
  const std::string allowed_d = allowed_tag.substr(0, allowed_tag.find("/>"));
  CHECK(count_of(allowed_d, "M") == 20);
  const std::string denied_tag = worst.substr(worst.find("class=\"bars-denied\""));
  CHECK(count_of(denied_tag.substr(0, denied_tag.find("/>")), "M") == 60);
  const std::string error_tag = other.substr(other.find("class=\"bars-errors\""));
  CHECK(count_of(error_tag.substr(0, error_tag.find("/>")), "M") == 1);
  CHECK(worst.find("<polyline class=\"in-window\"") != std::string::npos);
  CHECK(worst.find("class=\"contract-line\"") != std::string::npos);
  CHECK(worst.find("contract (sliding): 10 per 1s") != std::string::npos);
  // The contract line sits at 10 on the same scale as the window line's peak of 20.
  const double top = attribute(worst, "class=\"plot-area\"", "y");
  const double baseline = attribute(worst, "class=\"baseline\"", "y1");
  const double contract_y = attribute(worst, "class=\"contract-line\"", "y1");
  CHECK(contract_y > top);
  CHECK(contract_y < baseline);
}

TEST_CASE("the worst span is drawn on the worst identity only, where it happened") {
  const Report report = report_of(1);
  const RunStats& run = report.runs.front();
  REQUIRE(run.contract.worst_identity == 0);
  REQUIRE(run.contract.worst.count == 20);
  const std::string html = render_html({report});
  CHECK(count_of(html, "<rect class=\"worst-span\"") == 1);
  const std::string worst = element(html, "svg", "id=\"run-1-identity-0\"");
  const std::string other = element(html, "svg", "id=\"run-1-identity-1\"");
  CHECK(other.find("worst-span") == std::string::npos);

  const double plot_x = attribute(worst, "class=\"plot-area\"", "x");
  const double plot_width = attribute(worst, "class=\"plot-area\"", "width");
  const double span_x = attribute(worst, "class=\"worst-span\"", "x");
  const double span_width = attribute(worst, "class=\"worst-span\"", "width");
  const double duration = static_cast<double>(run.timeline->duration_ns);
  const double start = static_cast<double>(run.contract.worst.start_ns) / duration;
  const double length = static_cast<double>(run.contract.worst.length_ns) / duration;
  CHECK((span_x - plot_x) / plot_width == doctest::Approx(start).epsilon(0.002));
  CHECK(span_width / plot_width == doctest::Approx(length).epsilon(0.002));
  CHECK(length > 0.2);  // about a second of four
  CHECK(worst.find(">20 admitted in ") != std::string::npos);
  CHECK(worst.find("(allowed 10)</text>") != std::string::npos);
}

TEST_CASE("the retry-after histogram bins the hint errors of all runs, zones shaded") {
  Report report = report_of(2);
  auto hint = [](int64_t error_ms) {
    HintError error;
    error.error_ms = error_ms;
    return error;
  };
  report.runs[0].retry_accuracy.errors = {hint(-1500), hint(0), hint(0)};
  report.runs[0].retry_accuracy.early = 1;
  report.runs[1].retry_accuracy.errors = {hint(0), hint(1600)};
  report.runs[1].retry_accuracy.late = 1;
  const std::string html = render_html({report});
  CHECK(html.find("<p class=\"no-hints\">") == std::string::npos);
  const std::string histogram = element(html, "svg", "class=\"retry-histogram\"");
  CHECK(histogram.find("class=\"zone-early\"") != std::string::npos);
  CHECK(histogram.find("class=\"zone-late\"") != std::string::npos);
  CHECK(count_of(histogram, "<rect class=\"hint-bar\"") == 3);
  CHECK(histogram.find(">3</text>") != std::string::npos);  // the three exact hints, labelled
  CHECK(count_of(histogram, ">1</text>") == 2);
  CHECK(html.find("5 hints judged over 2 runs: 1 early") != std::string::npos);
  // The early bar lies in the early zone, the late one in the late zone.
  const double early_zone_end = attribute(histogram, "class=\"zone-early\"", "x") +
                                attribute(histogram, "class=\"zone-early\"", "width");
  const double late_zone_start = attribute(histogram, "class=\"zone-late\"", "x");
  const size_t first_bar = histogram.find("<rect class=\"hint-bar\"");
  const size_t last_bar = histogram.rfind("<rect class=\"hint-bar\"");
  CHECK(attribute(histogram.substr(first_bar), "hint-bar", "x") < early_zone_end);
  CHECK(attribute(histogram.substr(last_bar), "hint-bar", "x") > late_zone_start);
}

TEST_CASE("without hints the page says so instead of drawing an empty histogram") {
  const std::string html = render_html({report_of(1)});
  CHECK(html.find("retry-histogram") == std::string::npos);
  CHECK(html.find("<p class=\"no-hints\">") != std::string::npos);
}

TEST_CASE("timelines are capped, and the page says how many runs were left out") {
  const std::string html = render_html({report_of(10)});
  CHECK(html.find("id=\"run-8-identity-0\"") != std::string::npos);
  CHECK(html.find("id=\"run-9-identity-0\"") == std::string::npos);
  CHECK(count_of(html, "<svg class=\"timeline\"") == 16);
  CHECK(html.find("2 more runs not drawn") != std::string::npos);
}

TEST_CASE("compare: each report has its own section and ids that do not collide") {
  Report second = report_of(1);
  second.target.strategy = "sliding-window";
  rlcheck::test::describe(second);
  second.verdict = Verdict::pass;
  const std::string html = render_html({report_of(1), second});
  CHECK(html.find("id=\"report-1\"") != std::string::npos);
  CHECK(html.find("id=\"report-2\"") != std::string::npos);
  CHECK(count_of(html, "id=\"run-1-identity-0\"") == 1);
  CHECK(count_of(html, "id=\"report-2-run-1-identity-0\"") == 1);
  CHECK(html.find("class=\"badge pass\"") != std::string::npos);
}

TEST_CASE("a sub-millisecond run labels its bins in microseconds, not as 0.0 ms") {
  Report report = report_of(1);
  RunStats& run = report.runs.front();
  // A burst over in 0.9 ms: 400 bins of 2.25 us each.
  std::vector<RequestRecord> records;
  for (uint64_t seq = 0; seq < 20; ++seq) {
    RequestRecord r = record(seq, 0, 0, seq < 10 ? Outcome::allowed : Outcome::denied);
    r.sent_ns = static_cast<int64_t>(seq) * 40'000;
    r.replied_ns = r.sent_ns + 100'000;
    records.push_back(r);
  }
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  run.timeline = rlcheck::checks::build_timeline(identities, sliding(10), 900'000, 0);
  REQUIRE(run.timeline->bin_ns == 2250);
  const std::string html = render_html({report});
  CHECK(html.find("per 0.0 ms bin") == std::string::npos);
  CHECK(html.find("per 2.25 µs bin") != std::string::npos);
}

TEST_CASE("each applied fault is a shaded band with its spec, where it was in the run") {
  Report report = report_of(2);
  rlcheck::checks::FaultWindow pause;
  pause.spec = "pause@1s+1s";
  pause.at_ns = 1000 * k_ms;
  pause.until_ns = 2000 * k_ms;
  pause.applied = true;
  rlcheck::checks::FaultWindow failed;
  failed.spec = "restart@3s";
  failed.error = "restart needs the embedded Redis";
  report.runs[0].faults = {pause, failed};
  const std::string html = render_html({report});
  // Run 1's two identities get the band; the unapplied fault and run 2 get none.
  CHECK(count_of(html, "<rect class=\"fault\"") == 2);
  CHECK(html.find("restart@3s") == std::string::npos);
  CHECK(html.find("fault (--fault)") != std::string::npos);  // in the legend
  const std::string svg = element(html, "svg", "id=\"run-1-identity-1\"");
  const double plot_x = attribute(svg, "class=\"plot-area\"", "x");
  const double plot_width = attribute(svg, "class=\"plot-area\"", "width");
  CHECK((attribute(svg, "class=\"fault\"", "x") - plot_x) / plot_width ==
        doctest::Approx(0.25).epsilon(0.002));
  CHECK(attribute(svg, "class=\"fault\"", "width") / plot_width ==
        doctest::Approx(0.25).epsilon(0.002));
  CHECK(svg.find("class=\"fault-label\"") != std::string::npos);
  CHECK(svg.find(">pause@1s+1s</text>") != std::string::npos);
  CHECK(element(html, "svg", "id=\"run-2-identity-0\"").find("class=\"fault") == std::string::npos);
}

TEST_CASE("without faults the timeline has no band and the legend no fault entry") {
  const std::string html = render_html({report_of(1)});
  CHECK(html.find("class=\"fault") == std::string::npos);
  CHECK(html.find("fault (--fault)") == std::string::npos);
}
