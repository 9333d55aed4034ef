#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/schedule.hpp"
#include "report/records_writer.hpp"

using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::report::RecordsWriter;

namespace {

RequestRecord record(uint64_t seq, Outcome outcome, int64_t sent_ns, int64_t replied_ns) {
  RequestRecord r;
  r.seq = seq;
  r.identity = static_cast<uint32_t>(seq % 2);
  r.sent_ns = sent_ns;
  r.replied_ns = replied_ns;
  r.outcome = outcome;
  return r;
}

// Allowed (http 200), denied with a hint, an error status, a timeout, one never sent.
std::vector<RequestRecord> sample_run() {
  RequestRecord allowed = record(0, Outcome::allowed, 1'500, 2'250'999);
  allowed.status = 200;
  RequestRecord denied = record(1, Outcome::denied, 3'000, 4'000'000);
  denied.status = 429;
  denied.retry_ms = 9000;
  RequestRecord status = record(2, Outcome::error, 5'000, 6'000);
  status.status = 503;
  status.error = ErrorKind::status;
  RequestRecord timeout = record(3, Outcome::error, 7'000, 5'000'007'000);
  timeout.error = ErrorKind::timeout;
  RequestRecord unsent = record(4, Outcome::error, 0, 0);
  unsent.error = ErrorKind::not_sent;
  return {allowed, denied, status, timeout, unsent};
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("records format: .csv (any case) is CSV, anything else JSON lines") {
  CHECK(RecordsWriter::format_for("out.csv") == RecordsWriter::Format::csv);
  CHECK(RecordsWriter::format_for("/tmp/OUT.CSV") == RecordsWriter::Format::csv);
  CHECK(RecordsWriter::format_for("out.jsonl") == RecordsWriter::Format::jsonl);
  CHECK(RecordsWriter::format_for("csv") == RecordsWriter::Format::jsonl);
  CHECK(RecordsWriter::format_for("out.csv.gz") == RecordsWriter::Format::jsonl);
}

TEST_CASE("records as JSON lines: one object per request, absent fields left out") {
  std::ostringstream out;
  RecordsWriter writer(out, RecordsWriter::Format::jsonl, false);
  writer.write_run("http://127.0.0.1/", 2, sample_run());
  CHECK(writer.finish());
  const auto all = lines(out.str());
  REQUIRE(all.size() == 5);
  std::vector<nlohmann::json> parsed;
  for (const auto& line : all)
    parsed.push_back(nlohmann::json::parse(line));

  CHECK(parsed[0] == nlohmann::json::parse(R"({"run":2,"seq":0,"identity":0,"send_us":1,
      "reply_us":2250,"outcome":"allowed","status":200,"wall_ms":0,"worker":0})"));
  CHECK(parsed[1]["outcome"] == "denied");
  CHECK(parsed[1]["retry_ms"] == 9000);
  CHECK_FALSE(parsed[1].contains("error_kind"));
  CHECK(parsed[2]["error_kind"] == "status-503");
  CHECK(parsed[2]["status"] == 503);
  CHECK(parsed[3]["error_kind"] == "timeout");
  CHECK(parsed[3]["reply_us"] == 5'000'007);
  CHECK_FALSE(parsed[3].contains("status"));
  // Never sent: no instants to give.
  CHECK(parsed[4]["error_kind"] == "not-sent");
  CHECK_FALSE(parsed[4].contains("send_us"));
  CHECK_FALSE(parsed[4].contains("reply_us"));
  for (const auto& line : parsed)
    CHECK_FALSE(line.contains("target"));
  // The field order users read: run first.
  CHECK(all[0].starts_with(R"({"run":2,"seq":0,"identity":0,"send_us":1,)"));
}

TEST_CASE("records as CSV: a header line, then one row per request, empty cells for absent") {
  std::ostringstream out;
  RecordsWriter writer(out, RecordsWriter::Format::csv, false);
  writer.write_run("naive", 1, sample_run());
  CHECK(writer.finish());
  const auto all = lines(out.str());
  REQUIRE(all.size() == 6);
  CHECK(all[0] ==
        "run,seq,identity,send_us,reply_us,outcome,status,error_kind,retry_ms,due_us,wall_ms,"
        "worker");
  CHECK(all[1] == "1,0,0,1,2250,allowed,200,,,,0,0");
  CHECK(all[2] == "1,1,1,3,4000,denied,429,,9000,,0,0");
  CHECK(all[3] == "1,2,0,5,6,error,503,status-503,,,0,0");
  CHECK(all[4] == "1,3,1,7,5000007,error,,timeout,,,0,0");
  CHECK(all[5] == "1,4,0,,,error,,not-sent,,,,0");
}

TEST_CASE("records as CSV under --cost: a cost column after retry_ms, every row's units") {
  std::vector<RequestRecord> run = sample_run();
  run[0].cost = 7;
  run[1].cost = 3;
  std::ostringstream out;
  RecordsWriter writer(out, RecordsWriter::Format::csv, false, {}, true);
  writer.write_run("", 1, run);
  CHECK(writer.finish());
  const auto all = lines(out.str());
  REQUIRE(all.size() == 6);
  CHECK(all[0] ==
        "run,seq,identity,send_us,reply_us,outcome,status,error_kind,retry_ms,cost,due_us,"
        "wall_ms,worker");
  CHECK(all[1] == "1,0,0,1,2250,allowed,200,,,7,,0,0");
  CHECK(all[2] == "1,1,1,3,4000,denied,429,,9000,3,,0,0");
  CHECK(all[3] == "1,2,0,5,6,error,503,status-503,,1,,0,0");
}

TEST_CASE("records with a target (compare): first field, escaped for the format") {
  const std::vector<RequestRecord> one{sample_run().front()};
  const std::string target = "http://h/a,\"b\"";
  SUBCASE("CSV quotes a cell holding a comma or a quote") {
    std::ostringstream out;
    RecordsWriter writer(out, RecordsWriter::Format::csv, true);
    writer.write_run(target, 1, one);
    const auto all = lines(out.str());
    REQUIRE(all.size() == 2);
    CHECK(all[0] ==
          "target,run,seq,identity,send_us,reply_us,outcome,status,error_kind,retry_ms,due_us,"
          "wall_ms,worker");
    CHECK(all[1] == "\"http://h/a,\"\"b\"\"\",1,0,0,1,2250,allowed,200,,,,0,0");
  }
  SUBCASE("JSON escapes it") {
    std::ostringstream out;
    RecordsWriter writer(out, RecordsWriter::Format::jsonl, true);
    writer.write_run(target, 3, one);
    const auto all = lines(out.str());
    REQUIRE(all.size() == 1);
    const auto parsed = nlohmann::json::parse(all[0]);
    CHECK(parsed["target"] == target);
    CHECK(parsed["run"] == 3);
    CHECK(all[0].starts_with(R"({"target":)"));
  }
}

TEST_CASE("records: many runs append, large runs come out whole") {
  std::vector<RequestRecord> big;
  for (uint64_t i = 0; i < 20'000; ++i)
    big.push_back(record(i, Outcome::allowed, static_cast<int64_t>(i) * 1000, 0));
  std::ostringstream out;
  RecordsWriter writer(out, RecordsWriter::Format::csv, false);
  writer.write_run("x", 1, big);
  writer.write_run("x", 2, big);
  CHECK(writer.finish());
  const auto all = lines(out.str());
  REQUIRE(all.size() == 40'001);
  CHECK(all[20'000] == "1,19999,1,19999,0,allowed,,,,,19,0");
  CHECK(all[40'000] == "2,19999,1,19999,0,allowed,,,,,19,0");
}

TEST_CASE("records: a stream that fails is reported by finish") {
  std::ostringstream out;
  RecordsWriter writer(out, RecordsWriter::Format::jsonl, false);
  out.setstate(std::ios::badbit);
  writer.write_run("x", 1, sample_run());
  CHECK_FALSE(writer.finish());
}

TEST_CASE("records: open_file names why a path cannot be written") {
  const auto opened = RecordsWriter::open_file("/nonexistent-dir/records.csv", false);
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().find("No such file") != std::string::npos);
}

TEST_CASE("records: due_us, wall_ms and worker, derived from the run, after the other fields") {
  rlcheck::config::LoadConfig load;
  load.requests = 5;
  load.rate = rlcheck::config::Rate{1000, std::chrono::seconds(1)};  // due 1 ms apart
  const auto schedule = rlcheck::engine::Schedule::make(load);
  rlcheck::report::RunContext context;
  context.start_wall_ns = 1'700'000'000'123'000'000;
  context.schedule = &schedule;
  context.share_count = 3;
  std::vector<RequestRecord> run;
  for (uint64_t seq = 0; seq < 4; ++seq) {
    // Each left 250 us after it was due.
    const int64_t sent = static_cast<int64_t>(seq) * 1'000'000 + 250'000;
    run.push_back(record(seq, Outcome::allowed, sent, sent + 100'000));
  }
  RequestRecord unsent = record(4, Outcome::error, 0, 0);
  unsent.error = ErrorKind::not_sent;
  run.push_back(unsent);

  SUBCASE("JSON lines: every derived field, wall_ms only for what was sent") {
    std::ostringstream out;
    RecordsWriter writer(out, RecordsWriter::Format::jsonl, false, {0, 800});
    writer.write_run("", 1, run, context);
    REQUIRE(writer.finish());
    const auto all = lines(out.str());
    REQUIRE(all.size() == 5);
    for (uint64_t seq = 0; seq < 5; ++seq) {
      const auto line = nlohmann::json::parse(all[seq]);
      CHECK(line["due_us"] == seq * 1000);
      CHECK(line["worker"] == seq % 3);
      if (seq < 4)
        CHECK(line["wall_ms"] == 1'700'000'000'123 + seq);
    }
    CHECK_FALSE(nlohmann::json::parse(all[4]).contains("wall_ms"));
    // After the existing fields, skew_ms included.
    CHECK(all[1].ends_with(R"("skew_ms":0,"due_us":1000,"wall_ms":1700000000124,"worker":1})"));
  }
  SUBCASE("CSV: three columns after the others, empty when absent") {
    std::ostringstream out;
    RecordsWriter writer(out, RecordsWriter::Format::csv, false, {0, 800});
    writer.write_run("", 1, run, context);
    REQUIRE(writer.finish());
    const auto all = lines(out.str());
    REQUIRE(all.size() == 6);
    CHECK(all[0] ==
          "run,seq,identity,send_us,reply_us,outcome,status,error_kind,retry_ms,skew_ms,due_us,"
          "wall_ms,worker");
    CHECK(all[3] == "1,2,0,2250,2350,allowed,,,,0,2000,1700000000125,2");
    CHECK(all[5] == "1,4,0,,,error,,not-sent,,0,4000,,1");
  }
  SUBCASE("the unpaced closed model has no due instant; alone, every request is worker 0") {
    rlcheck::config::LoadConfig closed;
    closed.requests = 5;
    const auto unpaced = rlcheck::engine::Schedule::make(closed);
    rlcheck::report::RunContext alone;
    alone.schedule = &unpaced;
    std::ostringstream out;
    RecordsWriter writer(out, RecordsWriter::Format::jsonl, false);
    writer.write_run("", 1, run, alone);
    REQUIRE(writer.finish());
    for (const auto& text : lines(out.str())) {
      const auto line = nlohmann::json::parse(text);
      CHECK_FALSE(line.contains("due_us"));
      CHECK(line["worker"] == 0);
    }
  }
  SUBCASE("on the virtual clock a request was due at the virtual instant it was sent") {
    context.virtual_clock = true;
    std::ostringstream out;
    RecordsWriter writer(out, RecordsWriter::Format::jsonl, false);
    writer.write_run("", 1, run, context);
    REQUIRE(writer.finish());
    const auto all = lines(out.str());
    CHECK(nlohmann::json::parse(all[2])["due_us"] == 2250);
    CHECK(nlohmann::json::parse(all[4])["due_us"] == 4000);  // never sent: its instant
  }
}
