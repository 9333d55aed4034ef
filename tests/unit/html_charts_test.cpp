// The timeline's drawing as the page holds it: the offered rate of a uniform schedule flat, and
// no label over another (boxes as report/html_layout estimates them).

#include <doctest/doctest.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "checks/contract_audit.hpp"
#include "checks/timeline.hpp"
#include "engine/schedule.hpp"
#include "report/html_layout.hpp"
#include "report/html_report.hpp"
#include "shared/svg_reading.hpp"

using rlcheck::checks::RunStats;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::report::Report;
using rlcheck::report::html::Anchor;
using rlcheck::report::html::Box;
using rlcheck::testing::first_timeline;
using rlcheck::testing::polyline_ys;

namespace {

constexpr int64_t k_ms = 1'000'000;

// A fixed window of 10 a second under --rate per_s/s for `seconds`, seen across its
// boundaries: the first and the last 10 of each second allowed (20 in the window around each
// boundary), the rest denied; every request sent `late(index)` ns after it was due.
template <typename Late>
Report uniform_report(int64_t per_s, int64_t seconds, Late late) {
  rlcheck::config::LoadConfig load;
  load.rate = rlcheck::config::Rate{per_s, std::chrono::seconds(1)};
  load.requests = per_s * seconds;
  const auto schedule = rlcheck::engine::Schedule::make(load);
  std::vector<RequestRecord> records;
  for (uint64_t i = 0; i < schedule.requests(); ++i) {
    RequestRecord r;
    r.seq = i;
    r.sent_ns = schedule.due(i).count() + late(i);
    r.replied_ns = r.sent_ns + k_ms / 2;
    const uint64_t in_second = i % static_cast<uint64_t>(per_s);
    r.outcome = in_second < 10 || in_second + 10 >= static_cast<uint64_t>(per_s) ? Outcome::allowed
                                                                                 : Outcome::denied;
    records.push_back(r);
  }
  rlcheck::checks::AdmissionRule rule;
  rule.limit = 10;
  rule.window_ns = 1000 * k_ms;
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  RunStats run;
  run.run = 1;
  run.requests = static_cast<int64_t>(records.size());
  run.duration_ms = static_cast<double>(seconds * 1000);
  run.contract = rlcheck::checks::audit_contract(identities, rule);
  run.timeline = rlcheck::checks::build_timeline(identities, rule, records.back().replied_ns,
                                                 run.contract.worst_identity);
  rlcheck::checks::add_offered_rate(*run.timeline, identities, schedule);
  Report report;
  report.target.url = "redis://127.0.0.1:6379";
  report.target.strategy = "fixed-window";
  report.params.limit = 10;
  report.params.window_ms = 1000;
  report.params.runs = 1;
  report.params.rate = fmt::format("{}/s", per_s);
  report.params.duration_ms = seconds * 1000;
  report.params.contract = "sliding";
  report.runs.push_back(run);
  return report;
}

struct Text {
  std::string text;
  Box box;
};

std::string unescaped(std::string text) {
  for (const auto& [entity, c] :
       {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
    for (size_t at; (at = text.find(entity)) != std::string::npos;)
      text.replace(at, std::string(entity).size(), c);
  }
  return text;
}

// Every text of `svg`, with its box as the chart estimates it.
std::vector<Text> texts_of(const std::string& svg) {
  std::vector<Text> out;
  const std::regex element(R"(<text ([^>]*)>([^<]*)</text>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element);
       it != std::sregex_iterator(); ++it) {
    const std::string attributes = (*it)[1].str();
    const std::string text = unescaped((*it)[2].str());
    const auto number = [&attributes](const std::string& name) {
      std::smatch match;
      REQUIRE_MESSAGE(
          std::regex_search(attributes, match, std::regex(" ?" + name + "=\"(-?[0-9.]+)\"")),
          "no " << name << " in " << attributes);
      return std::stod(match[1].str());
    };
    const double size = number("font-size");
    std::smatch turned;
    if (std::regex_search(
            attributes, turned,
            std::regex(R"(translate\((-?[0-9.]+) (-?[0-9.]+)\) rotate\((-?\d+)\))"))) {
      out.push_back({text, rlcheck::report::html::turned_text_box(
                               std::stod(turned[1].str()), std::stod(turned[2].str()),
                               std::stoi(turned[3].str()) < 0, size, text)});
      continue;
    }
    const Anchor anchor = attributes.find("text-anchor=\"end\"") != std::string::npos ? Anchor::end
                          : attributes.find("text-anchor=\"middle\"") != std::string::npos
                              ? Anchor::middle
                              : Anchor::start;
    out.push_back(
        {text, rlcheck::report::html::text_box(number("x"), number("y"), anchor, size, text)});
  }
  return out;
}

void check_no_overlap(const std::vector<Text>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) {
    for (size_t j = i + 1; j < texts.size(); ++j) {
      CHECK_MESSAGE(!rlcheck::report::html::overlaps(texts[i].box, texts[j].box),
                    "\"" << texts[i].text << "\" overlaps \"" << texts[j].text << "\"");
    }
  }
}

}  // namespace

TEST_CASE("html timeline: a uniform 40/s draws the sent rate flat, on the planned rate") {
  // Sends up to 9 ms late, never two alike in a row: a bin of the timeline holds 0 or 1.
  const Report report = uniform_report(40, 3, [](uint64_t i) { return (i * 7 % 10) * k_ms; });
  const std::string svg = first_timeline(rlcheck::report::render_html({report}));
  const std::vector<double> sent = polyline_ys(svg, "offered-rate");
  REQUIRE(sent.size() == 40);  // 120 requests, three a bin
  for (double y : sent)
    CHECK(y == sent.front());
  CHECK(polyline_ys(svg, "planned-rate") == sent);
  // 40/s on a scale to 50/s over the upper half (baseline 136, top 30).
  CHECK(sent.front() == doctest::Approx(136 - 40.0 / 50 * 106).epsilon(0.001));
}

TEST_CASE("html timeline: 7/s, 100/s and 1000/s draw flat too") {
  for (const int64_t per_s : {7, 100, 1000}) {
    CAPTURE(per_s);
    const Report report = uniform_report(per_s, 5, [](uint64_t) { return int64_t{0}; });
    const std::vector<double> sent =
        polyline_ys(first_timeline(rlcheck::report::render_html({report})), "offered-rate");
    REQUIRE(sent.size() >= 35);
    for (double y : sent)
      CHECK(y == sent.front());
  }
}

TEST_CASE("html timeline: the rate's ticks, 4 to 6, and the contract's label cover no label") {
  // At 40/s against a limit of 10, 20 in the window at most, the rate's tick 20/s (of 50/s)
  // falls on the contract's line (10 of 25).
  const Report report = uniform_report(40, 3, [](uint64_t) { return int64_t{0}; });
  const std::string svg = first_timeline(rlcheck::report::render_html({report}));
  const std::vector<Text> texts = texts_of(svg);
  check_no_overlap(texts);
  std::vector<std::string> rate_ticks;
  for (const Text& text : texts) {
    if (text.text.ends_with("/s") && text.text.find(' ') == std::string::npos)
      rate_ticks.push_back(text.text);
  }
  CHECK(rate_ticks == std::vector<std::string>{"10/s", "20/s", "30/s", "40/s", "50/s"});
  CHECK(svg.find("contract (sliding): 10 per 1s</text>") != std::string::npos);
  CHECK(svg.find(">20 admitted in ") != std::string::npos);
  // The window's scale: ticks of 5 to 25 on the left.
  for (const char* tick : {">5</text>", ">10</text>", ">15</text>", ">20</text>", ">25</text>"})
    CHECK_MESSAGE(svg.find(tick) != std::string::npos, tick);
}

TEST_CASE("html timeline: labels of faults and the worst span stay clear of each other") {
  Report report = uniform_report(40, 3, [](uint64_t) { return int64_t{0}; });
  std::vector<rlcheck::checks::FaultWindow> faults;
  for (int64_t at : {2500, 2600, 2700}) {
    rlcheck::checks::FaultWindow fault;
    fault.spec = fmt::format("pause@{}ms+100ms", at);
    fault.at_ns = at * k_ms;
    fault.until_ns = (at + 100) * k_ms;
    fault.applied = true;
    faults.push_back(fault);
  }
  report.runs[0].faults = faults;
  const std::string svg = first_timeline(rlcheck::report::render_html({report}));
  check_no_overlap(texts_of(svg));
  // Three bands, their labels on rows of their own.
  for (const auto& fault : faults)
    CHECK(svg.find(">" + fault.spec + "</text>") != std::string::npos);
}

TEST_CASE("html timeline: a window of tens of thousands keeps every tick, shortened") {
  Report report = uniform_report(40, 3, [](uint64_t) { return int64_t{0}; });
  report.runs[0].timeline->contract_line = 20000;
  const std::string svg = first_timeline(rlcheck::report::render_html({report}));
  check_no_overlap(texts_of(svg));
  for (const char* tick :
       {">5000</text>", ">10k</text>", ">15k</text>", ">20k</text>", ">25k</text>"})
    CHECK_MESSAGE(svg.find(tick) != std::string::npos, tick);
}
TEST_CASE("html timeline: under costs the axes and the caption count units") {
  // The uniform 40/s report, each request costing 1 to 4 units.
  Report report = uniform_report(40, 3, [](uint64_t) { return int64_t{0}; });
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  int64_t allowed_units = 0, denied_units = 0;
  for (int64_t t = 0; t < 3000; t += 25) {
    RequestRecord r;
    r.seq = seq++;
    r.sent_ns = t * k_ms;
    r.replied_ns = r.sent_ns + k_ms / 2;
    r.cost = static_cast<int32_t>(1 + seq % 4);
    r.outcome = t % 1000 < 250 ? Outcome::allowed : Outcome::denied;
    (r.outcome == Outcome::allowed ? allowed_units : denied_units) += r.cost;
    records.push_back(r);
  }
  rlcheck::checks::AdmissionRule rule;
  rule.limit = 40;
  rule.window_ns = 1000 * k_ms;
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  RunStats& run = report.runs.front();
  run.timeline = rlcheck::checks::build_timeline(identities, rule, 3000 * k_ms, 0, true);
  const std::string html = rlcheck::report::render_html({report});
  const std::string svg = first_timeline(html);
  CHECK(svg.find(">units in window</text>") != std::string::npos);
  CHECK(svg.find(">units per 7.5 ms bin</text>") != std::string::npos);
  CHECK(html.find(fmt::format("units: {} allowed, {} denied, 0 errors", allowed_units,
                              denied_units)) != std::string::npos);
  CHECK(html.find("units admitted in the trailing window") != std::string::npos);
  check_no_overlap(texts_of(svg));

  // Counted by request, the same page says nothing of units.
  run.timeline = rlcheck::checks::build_timeline(identities, rule, 3000 * k_ms, 0);
  const std::string by_request = rlcheck::report::render_html({report});
  CHECK(by_request.find("units") == std::string::npos);
  CHECK(by_request.find(">in window</text>") != std::string::npos);
}

namespace {

// A concurrency cap of 2 over 2 s: pairs of admissions sent 10 ms apart every 500 ms, each
// answered 400 ms on, held at least 300 ms; so 2 surely in flight at once, never 3.
Report concurrency_report() {
  std::vector<RequestRecord> records;
  for (int64_t at = 0; at < 2000; at += 500) {
    for (int64_t k = 0; k < 3; ++k) {
      RequestRecord r;
      r.seq = records.size();
      r.sent_ns = (at + 10 * k) * k_ms;
      r.replied_ns = k < 2 ? r.sent_ns + 400 * k_ms : r.sent_ns + k_ms;
      r.outcome = k < 2 ? Outcome::allowed : Outcome::denied;
      records.push_back(r);
    }
  }
  rlcheck::checks::AdmissionRule rule;
  rule.limit = 2;
  rule.window_ns = 60'000 * k_ms;
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  RunStats run;
  run.run = 1;
  run.requests = static_cast<int64_t>(records.size());
  run.timeline = rlcheck::checks::build_timeline(identities, rule, 2000 * k_ms, 0);
  rlcheck::checks::add_in_flight(*run.timeline, identities, 2, 300 * k_ms, 50 * k_ms);
  Report report;
  report.target.url = "http://127.0.0.1:8080/";
  report.params.limit = 2;
  report.params.window_ms = 60'000;
  report.params.runs = 1;
  report.params.contract = "concurrency:2";
  report.runs.push_back(run);
  return report;
}

}  // namespace

TEST_CASE("html timeline of a concurrency cap: in flight surely and possibly, against the cap") {
  const std::string html = rlcheck::report::render_html({concurrency_report()});
  const std::string svg = first_timeline(html);
  // No window line: the cap counts requests in flight.
  CHECK(svg.find("class=\"in-window\"") == std::string::npos);
  CHECK(svg.find("cap (concurrency:2): 2 in flight at once</text>") != std::string::npos);
  // The parameters name the cap, not a limit per window.
  CHECK(html.find("<dt>limit</dt><dd>at most 2 in progress at once") != std::string::npos);
  CHECK(html.find("2 per 1m") == std::string::npos);
  CHECK(svg.find(">in flight</text>") != std::string::npos);
  const std::vector<double> surely = polyline_ys(svg, "in-flight-surely");
  const std::vector<double> possibly = polyline_ys(svg, "in-flight-possibly");
  // Both lines top out at the cap's own height (2 of the axis), never above it.
  std::smatch cap;
  REQUIRE(
      std::regex_search(svg, cap, std::regex(R"re(class="contract-line"[^>]* y1="([0-9.]+)")re")));
  const double cap_y = std::stod(cap[1].str());
  CHECK(*std::min_element(surely.begin(), surely.end()) == doctest::Approx(cap_y));
  CHECK(*std::min_element(possibly.begin(), possibly.end()) == doctest::Approx(cap_y));
  CHECK(html.find("most surely in flight (by the hold)") != std::string::npos);
  check_no_overlap(texts_of(svg));
}

TEST_CASE("html timeline of a ban: each span surely banned shaded on its identity's chart") {
  Report report = uniform_report(40, 3, [](uint64_t) { return int64_t{0}; });
  report.params.contract = "ban:fixed:10/1s,1s";
  report.runs[0].timeline->series.front().ban_spans = {{300 * k_ms, 1300 * k_ms},
                                                       {2100 * k_ms, 2900 * k_ms}};
  const std::string html = rlcheck::report::render_html({report});
  const std::string svg = first_timeline(html);
  const std::regex band(R"re(<rect class="ban-span" x="([0-9.]+)"[^>]* width="([0-9.]+)")re");
  std::vector<double> widths;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), band); it != std::sregex_iterator();
       ++it)
    widths.push_back(std::stod((*it)[2].str()));
  REQUIRE(widths.size() == 2);
  CHECK(widths[0] > widths[1]);  // 1 s against 0.8 s
  CHECK(svg.find("banned (surely) from 300ms to 1300ms") != std::string::npos);
  CHECK(html.find("surely banned (--contract ban)") != std::string::npos);
  // A report without bans says nothing of them.
  const std::string plain =
      rlcheck::report::render_html({uniform_report(40, 3, [](uint64_t) { return int64_t{0}; })});
  CHECK(plain.find("surely banned") == std::string::npos);
}

TEST_CASE("html timeline of a queue: each slice's longest wait against the promised wait") {
  Report report = uniform_report(40, 3, [](uint64_t) { return int64_t{0}; });
  report.params.contract = "queue";
  auto& timeline = *report.runs[0].timeline;
  timeline.promised_wait_ns = 250 * k_ms;
  timeline.wait_tolerance_ns = 100 * k_ms;
  auto& waits = timeline.series.front().wait_most_ns;
  waits.assign(static_cast<size_t>(rlcheck::checks::k_timeline_bins), -1);
  waits[10] = 100 * k_ms;  // kept
  waits[20] = 300 * k_ms;  // past the promise, within the tolerance: kept
  waits[30] = 500 * k_ms;  // past both: late
  const std::string html = rlcheck::report::render_html({report});
  const size_t start = html.find("<svg class=\"queue-waits\"");
  REQUIRE(start != std::string::npos);
  const std::string svg = html.substr(start, html.find("</svg>", start) - start);
  const auto bars = [&svg](const std::string& name) {
    const std::string path = rlcheck::testing::attribute_of(svg, name, "d");
    return std::count(path.begin(), path.end(), 'M');
  };
  CHECK(bars("waits-kept") == 2);
  CHECK(bars("waits-late") == 1);
  CHECK(svg.find("promised wait (queue / rate): 250 ms</text>") != std::string::npos);
  check_no_overlap(texts_of(svg));
  // A report of no queue draws no waits.
  CHECK(rlcheck::report::render_html({uniform_report(40, 3, [](uint64_t) {
          return int64_t{0};
        })}).find("queue-waits") == std::string::npos);
}

TEST_CASE("html timeline of a slow-down: each slice's longest delay against its place's") {
  Report report = uniform_report(40, 3, [](uint64_t) { return int64_t{0}; });
  report.params.contract = "slow-down:3/1s,100ms";
  auto& series = report.runs[0].timeline->series.front();
  const auto bins = static_cast<size_t>(rlcheck::checks::k_timeline_bins);
  series.wait_most_ns.assign(bins, -1);
  series.wait_promised_ns.assign(bins, -1);
  series.wait_allowed_ns.assign(bins, -1);
  const auto slice = [&series](size_t bin, int64_t wait_ms, int64_t promised_ms) {
    series.wait_most_ns[bin] = wait_ms * k_ms;
    series.wait_promised_ns[bin] = promised_ms * k_ms;
    series.wait_allowed_ns[bin] = (promised_ms + 100) * k_ms;
  };
  slice(10, 0, 0);       // kept
  slice(11, 150, 100);   // past its promise, within the tolerance: kept
  slice(12, 450, 200);   // past both: late
  slice(200, 300, 300);  // kept, on a promise of its own
  const std::string html = rlcheck::report::render_html({report});
  CHECK(html.find("queue-waits") == std::string::npos);
  const size_t start = html.find("<svg class=\"slow-down-waits\"");
  REQUIRE(start != std::string::npos);
  const std::string svg = html.substr(start, html.find("</svg>", start) - start);
  const auto count_of = [&svg](const std::string& name, char command) {
    const std::string path = rlcheck::testing::attribute_of(svg, name, "d");
    return std::count(path.begin(), path.end(), command);
  };
  CHECK(count_of("waits-kept", 'M') == 3);
  CHECK(count_of("waits-late", 'M') == 1);
  // The promise: one step line from bin 10 to bin 200, three steps up.
  CHECK(count_of("promised-wait", 'M') == 1);
  CHECK(count_of("promised-wait", 'V') == 3);
  CHECK(svg.find("most delay its place in the window allows</text>") != std::string::npos);
  check_no_overlap(texts_of(svg));
}
