#include "observe/openmetrics.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

using rlcheck::engine::ErrorKind;
using rlcheck::engine::live_latency_bucket;
using rlcheck::engine::LiveSnapshot;
using rlcheck::observe::content_type;
using rlcheck::observe::Extras;
using rlcheck::observe::Format;
using rlcheck::observe::negotiate;
using rlcheck::observe::render;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& each : lines_of(text)) {
    if (each == line)
      return true;
  }
  return false;
}

// Two runs: 10 allowed, 90 denied, 2 timeouts; latencies 50 us x 10, 2 ms x 80, 20 s x 10.
LiveSnapshot two_runs() {
  LiveSnapshot snapshot;
  snapshot.total.sent = 105;
  snapshot.total.decided = {10, 90, 2};
  snapshot.in_flight = 3;
  snapshot.errors[static_cast<size_t>(ErrorKind::timeout)] = 2;
  snapshot.latency[live_latency_bucket(50'000)] = 10;
  snapshot.latency[live_latency_bucket(2'000'000)] = 80;
  snapshot.latency[live_latency_bucket(20'000'000'000)] = 10;
  snapshot.within_bound[0] = 10;  // le 0.0001
  snapshot.within_bound[4] = 80;  // le 0.0025
  snapshot.latency_count = 100;
  snapshot.latency_sum_ns = 10 * 50'000 + 80 * 2'000'000 + 10 * 20'000'000'000ULL;
  snapshot.runs.push_back({"", 1, {50, {5, 45, 0}}, {}});
  snapshot.runs.push_back({"", 2, {55, {5, 45, 2}}, {}});
  snapshot.runs.back().detail.errors[static_cast<size_t>(ErrorKind::timeout)] = 2;
  snapshot.running = true;
  return snapshot;
}

Extras judged() {
  Extras extras;
  extras.version = "0.3.0";
  extras.checks = {{"", "limit", true}, {"", "retry-after-present", false}};
  extras.verdicts = {{"", 1}};
  return extras;
}

}  // namespace

TEST_CASE("openmetrics: the Accept header picks the format") {
  CHECK(negotiate("application/openmetrics-text; version=1.0.0,application/openmetrics-text;"
                  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1") ==
        Format::openmetrics);
  CHECK(negotiate("text/plain") == Format::prometheus);
  CHECK(negotiate("") == Format::prometheus);
  CHECK(std::string(content_type(Format::openmetrics)) ==
        "application/openmetrics-text; version=1.0.0; charset=utf-8");
  CHECK(std::string(content_type(Format::prometheus)) ==
        "text/plain; version=0.0.4; charset=utf-8");
}

TEST_CASE("openmetrics: Prometheus text: counters named _total, no # EOF") {
  const std::string text = render(two_runs(), judged(), Format::prometheus);
  CHECK(has_line(text, "# TYPE rlcheck_requests_total counter"));
  CHECK(has_line(text, "rlcheck_requests_total{outcome=\"allowed\",run=\"1\"} 5"));
  CHECK(has_line(text, "rlcheck_requests_total{outcome=\"error\",run=\"2\"} 2"));
  CHECK(has_line(text, "# TYPE rlcheck_errors_total counter"));
  CHECK(has_line(text, "rlcheck_errors_total{kind=\"timeout\",run=\"2\"} 2"));
  CHECK(has_line(text, "rlcheck_errors_total{kind=\"timeout\",run=\"1\"} 0"));
  CHECK(has_line(text, "rlcheck_errors_total{kind=\"connection-lost\",run=\"1\"} 0"));
  CHECK(text.find("rlcheck_errors_total{kind=\"none\"") == std::string::npos);
  CHECK(has_line(text, "rlcheck_in_flight 3"));
  CHECK(has_line(text, "rlcheck_run 2"));
  CHECK(has_line(text, "# TYPE rlcheck_info gauge"));
  CHECK(has_line(text, "rlcheck_info{version=\"0.3.0\"} 1"));
  CHECK(has_line(text, "rlcheck_check_status{check=\"limit\"} 1"));
  CHECK(has_line(text, "rlcheck_check_status{check=\"retry-after-present\"} 0"));
  CHECK(has_line(text, "# TYPE rlcheck_verdict gauge"));
  CHECK(has_line(text, "rlcheck_verdict 1"));
  CHECK(text.find("target=") == std::string::npos);  // one target: no label
  CHECK(text.find("# EOF") == std::string::npos);
  CHECK(text.ends_with("\n"));
}

TEST_CASE("openmetrics: OpenMetrics: counter families typed without _total, info, # EOF last") {
  const std::string text = render(two_runs(), judged(), Format::openmetrics);
  CHECK(has_line(text, "# TYPE rlcheck_requests counter"));
  CHECK(has_line(text, "# HELP rlcheck_requests Requests decided, by outcome and run."));
  CHECK(has_line(text, "rlcheck_requests_total{outcome=\"denied\",run=\"1\"} 45"));
  CHECK(has_line(text, "# TYPE rlcheck_errors counter"));
  CHECK(has_line(text, "# TYPE rlcheck info"));
  CHECK(has_line(text, "rlcheck_info{version=\"0.3.0\"} 1"));
  CHECK_FALSE(has_line(text, "# TYPE rlcheck_requests_total counter"));
  CHECK(text.ends_with("\n# EOF\n"));
  CHECK(text.find("# EOF") == text.size() - 6);
}

TEST_CASE("openmetrics: the histogram's le ascend to +Inf, which equals _count") {
  for (const Format format : {Format::prometheus, Format::openmetrics}) {
    const std::string text = render(two_runs(), judged(), format);
    std::vector<double> bounds;
    std::vector<uint64_t> counts;
    for (const std::string& line : lines_of(text)) {
      if (!line.starts_with("rlcheck_latency_seconds_bucket{le=\""))
        continue;
      const size_t open = line.find('"') + 1;
      const std::string le = line.substr(open, line.find('"', open) - open);
      bounds.push_back(le == "+Inf" ? 1e300 : std::stod(le));
      counts.push_back(std::stoull(line.substr(line.rfind(' ') + 1)));
    }
    REQUIRE(bounds.size() == 17);
    for (size_t i = 1; i < bounds.size(); ++i) {
      CHECK(bounds[i] > bounds[i - 1]);
      CHECK(counts[i] >= counts[i - 1]);
    }
    CHECK(counts.back() == 100);
    CHECK(has_line(text, "rlcheck_latency_seconds_count 100"));
    CHECK(has_line(text, "rlcheck_latency_seconds_bucket{le=\"0.0001\"} 10"));
    CHECK(has_line(text, "rlcheck_latency_seconds_bucket{le=\"0.0025\"} 90"));
    CHECK(has_line(text, "rlcheck_latency_seconds_bucket{le=\"10.0\"} 90"));
    CHECK(has_line(text, "rlcheck_latency_seconds_sum 200.1605"));
  }
}

TEST_CASE("openmetrics: HELP before every TYPE, and every sample in a typed family") {
  Extras extras = judged();
  extras.offered_rate = 200;
  for (const Format format : {Format::prometheus, Format::openmetrics}) {
    const std::vector<std::string> lines = lines_of(render(two_runs(), extras, format));
    std::string family;
    size_t families = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      CAPTURE(line);
      if (line.starts_with("# TYPE ")) {
        ++families;
        family = line.substr(7, line.find(' ', 7) - 7);
        REQUIRE(i > 0);
        CHECK(lines[i - 1].starts_with("# HELP " + family + " "));
      } else if (!line.starts_with("#")) {
        CHECK(line.starts_with(family));
      }
    }
    CHECK(families == 9);
  }
}

TEST_CASE("openmetrics: compare labels every series with its target; a verdict each") {
  LiveSnapshot snapshot;
  snapshot.runs.push_back({"naive", 1, {20, {20, 0, 0}}, {}});
  snapshot.runs.back().detail.within_bound[3] = 20;  // le 0.001
  snapshot.runs.back().detail.latency_count = 20;
  snapshot.runs.back().detail.latency_sum_ns = 20 * 800'000;
  snapshot.runs.push_back({"lua", 1, {22, {10, 10, 2}}, {}});
  snapshot.runs.back().detail.errors[static_cast<size_t>(ErrorKind::timeout)] = 2;
  snapshot.runs.back().detail.within_bound[4] = 20;  // le 0.0025
  snapshot.runs.back().detail.latency_count = 20;
  snapshot.runs.back().detail.latency_sum_ns = 20 * 2'000'000;
  snapshot.in_flight = 4;
  snapshot.running = true;
  Extras extras;
  extras.version = "0.3.0";
  extras.by_target = true;
  extras.offered_rate = 50;
  extras.checks = {{"naive", "limit", false}, {"lua", "limit", true}};
  extras.verdicts = {{"naive", 1}};
  for (const Format format : {Format::prometheus, Format::openmetrics}) {
    const std::string text = render(snapshot, extras, format);
    CAPTURE(text);
    for (const std::string& line : lines_of(text)) {
      CAPTURE(line);
      if (!line.starts_with("#"))
        CHECK(line.find("target=\"") != std::string::npos);
    }
    CHECK(has_line(text,
                   "rlcheck_requests_total{outcome=\"allowed\",run=\"1\",target=\"naive\"} 20"));
    CHECK(has_line(text, "rlcheck_requests_total{outcome=\"denied\",run=\"1\",target=\"lua\"} 10"));
    CHECK(has_line(text, "rlcheck_errors_total{kind=\"timeout\",run=\"1\",target=\"lua\"} 2"));
    CHECK(has_line(text, "rlcheck_errors_total{kind=\"timeout\",run=\"1\",target=\"naive\"} 0"));
    CHECK(has_line(text, "rlcheck_latency_seconds_bucket{le=\"0.001\",target=\"naive\"} 20"));
    CHECK(has_line(text, "rlcheck_latency_seconds_bucket{le=\"0.001\",target=\"lua\"} 0"));
    CHECK(has_line(text, "rlcheck_latency_seconds_bucket{le=\"0.0025\",target=\"lua\"} 20"));
    CHECK(has_line(text, "rlcheck_latency_seconds_count{target=\"lua\"} 20"));
    CHECK(has_line(text, "rlcheck_latency_seconds_sum{target=\"naive\"} 0.016"));
    // lua's run is under way: what is in flight, the run and the rate are its own.
    CHECK(has_line(text, "rlcheck_in_flight{target=\"lua\"} 4"));
    CHECK(has_line(text, "rlcheck_in_flight{target=\"naive\"} 0"));
    CHECK(has_line(text, "rlcheck_run{target=\"lua\"} 1"));
    CHECK(has_line(text, "rlcheck_run{target=\"naive\"} 0"));
    CHECK(has_line(text, "rlcheck_offered_rate{target=\"lua\"} 50"));
    CHECK(has_line(text, "rlcheck_check_status{check=\"limit\",target=\"naive\"} 0"));
    CHECK(has_line(text, "rlcheck_check_status{check=\"limit\",target=\"lua\"} 1"));
    CHECK(has_line(text, "rlcheck_verdict{target=\"naive\"} 1"));
    CHECK(text.find("rlcheck_verdict{target=\"lua\"}") == std::string::npos);  // not yet judged
    CHECK(has_line(text, "rlcheck_info{version=\"0.3.0\",target=\"naive\"} 1"));
  }
  // Before judging there is no check status or verdict family at all.
  extras.checks.clear();
  extras.verdicts.clear();
  const std::string unjudged = render(snapshot, extras, Format::prometheus);
  CHECK(unjudged.find("rlcheck_check_status") == std::string::npos);
  CHECK(unjudged.find("rlcheck_verdict") == std::string::npos);
}
