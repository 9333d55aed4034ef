// --stages and --arrivals in the reports: params.stages and params.arrivals, runs[].stages[]
// and runs[].lateness_ms in JSON; the stages line and the per-stage table of the human report;
// the offered and planned rate on the HTML timeline.

#include <doctest/doctest.h>

#include <string>

#include "checks/contract_audit.hpp"
#include "checks/timeline.hpp"
#include "engine/schedule.hpp"
#include "report/html_report.hpp"
#include "report/human_report.hpp"
#include "report/json_report.hpp"

using nlohmann::json;
using rlcheck::checks::RunStats;
using rlcheck::checks::StageStats;
using rlcheck::report::Report;

namespace {

Report staged_report(size_t stages) {
  Report report;
  report.target.url = "redis://127.0.0.1:6379";
  report.target.strategy = "sliding-window";
  report.params.requests = 800;
  report.params.runs = 1;
  report.params.concurrency = 50;
  report.params.limit = 10;
  report.params.window_ms = 60'000;
  report.params.arrivals = "poisson";
  RunStats run;
  run.run = 1;
  run.lateness = rlcheck::checks::LatenessMs{0.0654, 0.72949, 3.5};
  for (size_t k = 0; k < stages; ++k) {
    report.params.stages.push_back({2000, 100.0 * static_cast<double>(k + 1)});
    report.params.duration_ms += 2000;
    StageStats stage;
    stage.from_ms = 2000.0 * static_cast<double>(k);
    stage.to_ms = stage.from_ms + 2000;
    stage.target_from_per_s = 100.0 * static_cast<double>(k);
    stage.target_to_per_s = 100.0 * static_cast<double>(k + 1);
    stage.planned = stage.sent = 100 + k;
    stage.allowed = k == 0 ? 10 : 0;
    stage.denied = stage.sent - stage.allowed;
    stage.latency_p50_ms = 0.25;
    stage.latency_p99_ms = 1.5;
    stage.lateness_p99_ms = 0.125;
    run.stages.push_back(stage);
  }
  report.runs.push_back(run);
  return report;
}

}  // namespace

TEST_CASE("to_json: params.stages and arrivals, runs[].stages and lateness_ms") {
  const json j = rlcheck::report::to_json(staged_report(2));
  CHECK(j["params"]["stages"] == json::parse(R"([{"duration_ms":2000.0,"target_per_s":100.0},
                                                  {"duration_ms":2000.0,"target_per_s":200.0}])"));
  CHECK(j["params"]["duration_ms"] == 4000.0);
  CHECK(j["params"]["arrivals"] == "poisson");
  CHECK_FALSE(j["params"].contains("rate"));
  const json& run = j["runs"][0];
  CHECK(run["lateness_ms"] == json::parse(R"({"p50":0.065,"p99":0.729,"max":3.5})"));
  REQUIRE(run["stages"].size() == 2);
  CHECK(run["stages"][1] == json::parse(R"({"from_ms":2000.0,"to_ms":4000.0,
      "target_from_per_s":100.0,"target_to_per_s":200.0,"planned":101,"sent":101,"allowed":0,
      "denied":101,"errors":0,"latency_ms":{"p50":0.25,"p99":1.5},"lateness_p99_ms":0.125})"));
}

TEST_CASE("to_json: the closed model has no stages, arrivals or lateness") {
  Report report = staged_report(0);
  report.params.arrivals.clear();
  report.runs[0].lateness.reset();
  const json j = rlcheck::report::to_json(report);
  CHECK_FALSE(j["params"].contains("stages"));
  CHECK_FALSE(j["params"].contains("arrivals"));
  CHECK_FALSE(j["runs"][0].contains("stages"));
  CHECK_FALSE(j["runs"][0].contains("lateness_ms"));
}

TEST_CASE("render_human: a stages line, and a table of the stages when there are at most 12") {
  const rlcheck::report::TextStyle plain{false, false};
  const std::string text = rlcheck::report::render_human(staged_report(3), plain);
  CHECK(text.find("poisson arrivals") != std::string::npos);
  // The header names the plan run, not a count of requests as if closed.
  CHECK(text.find("3 stages over 6.00s to a peak of 300/s (800 requests planned) x 1 run, 50 "
                  "connections") != std::string::npos);
  CHECK(text.find("stages 2.00s to 100/s, 2.00s to 200/s, 2.00s to 300/s (800 requests over "
                  "6.00s)\n") != std::string::npos);
  CHECK(text.find("late p99") != std::string::npos);
  CHECK(text.find("2.00s-4.00s") != std::string::npos);
  CHECK(text.find("100-200") != std::string::npos);
  const std::string many = rlcheck::report::render_human(staged_report(13), plain);
  CHECK(many.find("stages 2.00s to 100/s") != std::string::npos);
  CHECK(many.find("late p99") == std::string::npos);
}

TEST_CASE("the timeline's offered rate: sends per second over every identity, and the plan") {
  using rlcheck::engine::RequestRecord;
  std::vector<RequestRecord> records;
  for (uint64_t seq = 0; seq < 100; ++seq) {
    RequestRecord record;
    record.seq = seq;
    record.identity = static_cast<uint32_t>(seq % 2);
    record.sent_ns = static_cast<int64_t>(seq) * 10'000'000;  // 100/s for 1 s
    record.replied_ns = record.sent_ns + 1000;
    record.outcome = rlcheck::engine::Outcome::allowed;
    records.push_back(record);
  }
  RequestRecord unsent;
  unsent.seq = 100;
  unsent.outcome = rlcheck::engine::Outcome::error;
  unsent.error = rlcheck::engine::ErrorKind::not_sent;
  records.push_back(unsent);
  const auto identities = rlcheck::checks::split_by_identity(records, 2);
  rlcheck::checks::AdmissionRule rule;
  rule.limit = 10;
  rule.window_ns = 1'000'000'000;
  rlcheck::checks::Timeline timeline =
      rlcheck::checks::build_timeline(identities, rule, 1'000'000'000, 0);

  rlcheck::config::LoadConfig closed;
  closed.requests = 101;
  rlcheck::checks::add_offered_rate(timeline, identities, rlcheck::engine::Schedule::make(closed));
  CHECK(timeline.rate.empty());  // the closed model offers what the replies allow

  rlcheck::config::LoadConfig open = closed;
  open.rate = rlcheck::config::Rate{101, std::chrono::seconds(1)};
  rlcheck::checks::add_offered_rate(timeline, identities, rlcheck::engine::Schedule::make(open));
  REQUIRE(!timeline.rate.empty());
  double sent = 0;
  for (const rlcheck::checks::RateBin& bin : timeline.rate)
    sent += bin.sent_per_s * static_cast<double>(bin.to_ns - bin.from_ns) / 1e9;
  CHECK(sent == doctest::Approx(100));  // the request never sent is not offered
  CHECK(timeline.rate.front().planned_per_s == doctest::Approx(101));

  Report report = staged_report(1);
  report.runs[0].timeline = timeline;
  const std::string html = rlcheck::report::render_html({report});
  CHECK(html.find("class=\"offered-rate\"") != std::string::npos);
  CHECK(html.find("class=\"planned-rate\"") != std::string::npos);
  report.runs[0].timeline->rate.clear();
  CHECK(rlcheck::report::render_html({report}).find("offered-rate") == std::string::npos);
}

TEST_CASE("a run far behind its schedule says so: behind_schedule_ms, and a line in the report") {
  Report report = staged_report(2);
  CHECK(rlcheck::report::to_json(report)["runs"][0]["behind_schedule_ms"] == 3.5);
  const rlcheck::report::TextStyle plain{false, false};
  CHECK(rlcheck::report::render_human(report, plain).find("behind its schedule") ==
        std::string::npos);
  report.runs[0].duration_ms = 5000;
  report.runs[0].lateness->max = 2300;  // over 1 s and 10 % of the run
  CHECK(rlcheck::report::to_json(report)["runs"][0]["behind_schedule_ms"] == 2300);
  CHECK(rlcheck::report::render_human(report, plain).find("run 1 fell 2.30s behind its schedule") !=
        std::string::npos);
}
