// --clock-skew after the run: records keep which clock sent them, windows a skewed client named
// are placed again on rlcheck's clock, and the contract's failing detail names the clocks of
// the worst span's admissions. Also where the skews and time sources show in the reports.
#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checks/run_stats.hpp"
#include "checks/time_checks.hpp"
#include "report/human_report.hpp"
#include "report/json_report.hpp"
#include "report/records_writer.hpp"
#include "shared/report_description.hpp"

using namespace std::chrono_literals;
using rlcheck::checks::AdmissionPeak;
using rlcheck::checks::AdmissionRule;
using rlcheck::checks::AuditParams;
using rlcheck::checks::CheckParams;
using rlcheck::checks::RunStats;
using rlcheck::checks::Status;
using rlcheck::engine::Outcome;
using rlcheck::engine::RecordLog;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord admitted(uint64_t seq, int64_t sent_ms, uint8_t skew, int64_t bucket = 0) {
  RequestRecord r;
  r.seq = seq;
  r.sent_ns = sent_ms * k_ms;
  r.replied_ns = r.sent_ns + k_ms / 2;
  r.outcome = Outcome::allowed;
  r.clock_skew = skew;
  r.bucket = bucket;
  return r;
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("tally by skew: the span's admissions, by the clock that sent them") {
  const std::vector<RequestRecord> records{
      admitted(0, 0, 0),   admitted(1, 50, 1),  admitted(2, 100, 0),
      admitted(3, 150, 1), admitted(4, 200, 1), admitted(5, 900, 0),  // after the span
  };
  const AdmissionPeak span{5, 2, 0, 200 * k_ms + k_ms / 2};
  CHECK(rlcheck::checks::tally_by_skew(records, span, 2) == std::vector<int64_t>{2, 3});
  CHECK(rlcheck::checks::tally_by_skew(records, span, 0).empty());
  RequestRecord denied = admitted(6, 60, 0);
  denied.outcome = Outcome::denied;
  const std::vector<RequestRecord> denials{denied};
  CHECK(rlcheck::checks::tally_by_skew(denials, span, 2) == std::vector<int64_t>{0, 0});
}

TEST_CASE("windows a skewed client named are placed again on rlcheck's clock") {
  // fixed-window, 2 per 1 s: the client 800 ms ahead names window 11 for requests that fell in
  // window 10, so the limiter let 4 through where the contract allows 2.
  const int64_t start_wall_ns = 10'000 * k_ms;
  const auto records = [] {
    return RecordLog{admitted(0, 100, 0, 10), admitted(1, 150, 1, 11), admitted(2, 200, 0, 10),
                     admitted(3, 250, 1, 11)};
  };
  AuditParams audit;
  audit.rule.kind = AdmissionRule::Kind::fixed;
  audit.rule.limit = 2;
  audit.rule.window_ns = 1000 * k_ms;
  audit.rule.clock_ns = k_ms;
  audit.clock_skews = 2;

  RecordLog trusted = records();
  RunStats trusting;
  rlcheck::checks::audit_run(trusting, trusted, start_wall_ns, audit);
  CHECK_FALSE(trusting.contract.worst.exceeded());

  audit.own_clock_windows = true;
  RecordLog judged = records();
  RunStats stats;
  stats.run = 1;
  rlcheck::checks::audit_run(stats, judged, start_wall_ns, audit);
  CHECK(stats.contract.worst.count == 4);
  CHECK(stats.contract.worst.exceeded());
  CHECK(stats.contract.worst_by_skew == std::vector<int64_t>{2, 2});
  for (size_t i = 0; i < judged.size(); ++i)
    CHECK(judged[i].bucket == 10);

  CheckParams params;
  params.contract = "fixed";
  params.clock_skews = {0ns, 800ms};
  const auto result = rlcheck::checks::check_contract({stats}, params);
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail,
                 "; --clock-skew 0,+800ms: of the span's 4 admissions, 2 on a clock 0ms off and 2 "
                 "on one +800ms off: 2 over the limit"));
}

TEST_CASE("contract detail: clocks with no admission in the span are left out; a pass says none") {
  RunStats run;
  run.run = 2;
  run.contract.worst = AdmissionPeak{9, 5, 0, 1900 * k_ms};
  run.contract.worst_by_skew = {0, 9, 0};
  CheckParams params;
  params.contract = "sliding";
  params.clock_skews = {0ns, 500ms, -250ms};
  const auto failed = rlcheck::checks::check_contract({run}, params);
  CHECK(mentions(failed.detail,
                 "--clock-skew 0,+500ms,-250ms: of the span's 9 admissions, 9 on a clock +500ms "
                 "off: 4 over the limit"));
  run.contract.worst_by_skew = {4, 3, 2};
  CHECK(mentions(rlcheck::checks::check_contract({run}, params).detail,
                 "4 on a clock 0ms off, 3 on one +500ms off and 2 on one -250ms off"));
  params.contract = "token-bucket";
  CHECK(mentions(rlcheck::checks::check_contract({run}, params).detail, "over the allowance"));
  run.contract.worst = AdmissionPeak{5, 5, 0, 1900 * k_ms};
  const auto passed = rlcheck::checks::check_contract({run}, params);
  CHECK(passed.status == Status::pass);
  CHECK_FALSE(mentions(passed.detail, "--clock-skew"));
  params.clock_skews.clear();
  run.contract.worst = AdmissionPeak{9, 5, 0, 1900 * k_ms};
  CHECK_FALSE(mentions(rlcheck::checks::check_contract({run}, params).detail, "--clock-skew"));
}

TEST_CASE("JSON: params.clock_skew_ms and target.time_source only when given") {
  rlcheck::report::Report report;
  report.mode = "redis";
  rlcheck::test::describe(report);
  report.target.strategy = "sliding-window";
  rlcheck::test::describe(report);
  auto json = rlcheck::report::to_json(report);
  CHECK_FALSE(json["params"].contains("clock_skew_ms"));
  CHECK_FALSE(json["target"].contains("time_source"));
  report.params.clock_skew_ms = {0, 800, -250};
  report.target.time_source = "client";
  rlcheck::test::describe(report);
  json = rlcheck::report::to_json(report);
  CHECK(json["params"]["clock_skew_ms"] == nlohmann::json::array({0, 800, -250}));
  CHECK(json["target"]["time_source"] == "client");
  CHECK(json["target"]["strategy"] == "sliding-window");
}

TEST_CASE("human: a strategy on the client's clock is named so, in compare and in the header") {
  rlcheck::report::Report redis_time;
  redis_time.mode = "redis";
  rlcheck::test::describe(redis_time);
  redis_time.target.strategy = "sliding-window";
  rlcheck::test::describe(redis_time);
  redis_time.target.time_source = "redis";
  rlcheck::test::describe(redis_time);
  rlcheck::report::Report client_time = redis_time;
  client_time.target.time_source = "client";
  rlcheck::test::describe(client_time);
  client_time.params.clock_skew_ms = {0, 800};
  const std::string table =
      rlcheck::report::render_compare({redis_time, client_time}, rlcheck::report::TextStyle{});
  CHECK(mentions(table, "\nsliding-window "));
  CHECK(mentions(table, "\nsliding-window (client time) "));
  const std::string text = rlcheck::report::render_human(client_time, {});
  CHECK(mentions(text, "sliding-window (client time)"));
  CHECK(mentions(text, ", clock skew 0,+800ms"));
  rlcheck::report::Report fixed = client_time;
  fixed.target.strategy = "fixed-window";
  rlcheck::test::describe(fixed);
  CHECK(rlcheck::report::strategy_label(fixed.target) == "fixed-window");
}

TEST_CASE("records: skew_ms on every line only when skews were given") {
  using rlcheck::report::RecordsWriter;
  const std::vector<RequestRecord> run{admitted(0, 1, 0), admitted(1, 2, 1)};
  std::ostringstream json_lines;
  RecordsWriter jsonl(json_lines, RecordsWriter::Format::jsonl, false, {0, 800});
  jsonl.write_run("", 1, run);
  REQUIRE(jsonl.finish());
  std::istringstream in(json_lines.str());
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  CHECK(nlohmann::json::parse(first)["skew_ms"] == 0);
  CHECK(nlohmann::json::parse(second)["skew_ms"] == 800);

  std::ostringstream csv;
  RecordsWriter rows(csv, RecordsWriter::Format::csv, false, {0, -250});
  rows.write_run("", 1, run);
  REQUIRE(rows.finish());
  CHECK(csv.str().starts_with(
      "run,seq,identity,send_us,reply_us,outcome,status,error_kind,retry_ms,skew_ms,"));
  CHECK(mentions(csv.str(), ",allowed,,,,-250,"));

  std::ostringstream plain;
  RecordsWriter none(plain, RecordsWriter::Format::jsonl, false);
  none.write_run("", 1, run);
  REQUIRE(none.finish());
  CHECK_FALSE(mentions(plain.str(), "skew_ms"));
}
