#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "report/probe_report.hpp"

using rlcheck::checks::SecondLimitSearch;
using rlcheck::report::ProbeReport;

namespace {

ProbeReport sliding_five_per_second() {
  ProbeReport report;
  report.mode = "http";
  report.target = "http://127.0.0.1:8080/";
  report.inferred.algorithm = "sliding";
  report.inferred.limit = 5;
  report.inferred.window_ms = 991;
  report.inferred.window_tolerance_ms = 30;
  report.inferred.confidence = "high";
  report.flags = "--contract sliding --limit 5 --window 1s";
  report.parts = {"sliding:5/1s"};
  return report;
}

}  // namespace

TEST_CASE("probe report: no second_limit where nothing was inferred; the old fields stay") {
  ProbeReport report = sliding_five_per_second();
  report.inferred.algorithm = "unknown";
  const nlohmann::json json = rlcheck::report::probe_to_json(report);
  CHECK(json["schema"] == "rlcheck.probe/v1");
  CHECK(json["second_limit"].is_null());
  CHECK(json["flags"] == "--contract sliding --limit 5 --window 1s");
  CHECK(json["cost"] == 1);
  CHECK(rlcheck::report::render_probe(report, false).find("  second ") == std::string::npos);
}

TEST_CASE("probe report: a second limit found, as JSON and as the human line") {
  ProbeReport report = sliding_five_per_second();
  SecondLimitSearch& second = report.inferred.second.emplace();
  second.outcome = "found";
  second.requests = 24;
  second.admitted = 16;
  second.span_ms = 5144;
  second.rate_per_s = 4.47;
  second.limit = 15;
  second.window_ms = 5032;
  second.window_tolerance_ms = 114;
  report.flags = "--contract sliding:5/1s --contract sliding:15/5s";
  report.parts = {"sliding:5/1s", "sliding:15/5s"};
  const nlohmann::json json = rlcheck::report::probe_to_json(report);
  CHECK(json["second_limit"]["search"] == "found");
  CHECK(json["second_limit"]["limit"] == 15);
  CHECK(json["second_limit"]["window_ms"] == 5032);
  CHECK(json["second_limit"]["window_from"] == "readmission");
  CHECK(json["second_limit"]["reason"].is_null());
  CHECK(json["parts"] == nlohmann::json::array({"sliding:5/1s", "sliding:15/5s"}));
  CHECK(rlcheck::report::render_probe(report, false)
            .find("  second      sliding window, limit 15 per 5032 ms (±114), sustained at "
                  "4.47/s\n") != std::string::npos);
  CHECK(rlcheck::report::render_probe(report, true) ==
        "rlcheck probe  http://127.0.0.1:8080/  0 requests in 0.0 s: sliding window, limit 5 per "
        "991 ms (±30); and a second limit of 15 per 5032 ms\n");
}

TEST_CASE("probe report: none seen, and not looked for with the --max-time that would") {
  ProbeReport report = sliding_five_per_second();
  SecondLimitSearch& second = report.inferred.second.emplace();
  second.outcome = "none-seen";
  second.requests = 22;
  second.admitted = 22;
  second.span_ms = 4900;
  second.rate_per_s = 4.5;
  CHECK(rlcheck::report::render_probe(report, false)
            .find("  second      none seen: 22 requests over 4.9 s at 4.5/s") != std::string::npos);
  CHECK(rlcheck::report::probe_to_json(report)["second_limit"]["window_from"].is_null());

  second.outcome = "not-run";
  second.reason = "the budget left no room; --max-time 11s would";
  second.max_time_needed_ms = 11000;
  const nlohmann::json json = rlcheck::report::probe_to_json(report);
  CHECK(json["second_limit"]["search"] == "not-run");
  CHECK(json["second_limit"]["max_time_needed_ms"] == 11000);
  CHECK(rlcheck::report::render_probe(report, false)
            .find("  second      not looked for: the budget left no room; --max-time 11s would") !=
        std::string::npos);
}
