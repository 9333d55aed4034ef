#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "report/human_report.hpp"
#include "shared/report_description.hpp"

using rlcheck::checks::Status;
using rlcheck::checks::Verdict;
using rlcheck::report::render_compare;
using rlcheck::report::render_human;
using rlcheck::report::Report;
using rlcheck::report::TextStyle;
using rlcheck::report::verdict_line;

namespace {

Report report_with(std::vector<rlcheck::checks::CheckResult> checks, Verdict verdict) {
  Report report;
  report.target.url = "redis://127.0.0.1:6379";
  rlcheck::test::describe(report);
  report.target.strategy = "naive";
  rlcheck::test::describe(report);
  report.params.limit = 10;
  report.params.window_ms = 60'000;
  report.checks = std::move(checks);
  report.verdict = verdict;
  return report;
}

}  // namespace

TEST_CASE("verdict_line is PASS when nothing failed") {
  const Report r = report_with(
      {{"limit", Status::pass, "max allowed 10 <= limit 10"}, {"exact", Status::skip, ""}},
      Verdict::pass);
  CHECK(verdict_line(r) == "PASS");
}

TEST_CASE("verdict_line names the first failing check and its detail") {
  const Report r = report_with({{"limit", Status::pass, "fine"},
                                {"retry-after-valid", Status::fail, "2 of 5 retry hints"},
                                {"key-ttl", Status::fail, "key rl:x has no TTL"}},
                               Verdict::fail);
  CHECK(verdict_line(r) == "FAIL: retry-after-valid: 2 of 5 retry hints");
}

TEST_CASE("verdict_line says ERROR when the verdict is error") {
  const Report r =
      report_with({{"errors", Status::fail, "run 1 had 3 errored requests"}}, Verdict::error);
  CHECK(verdict_line(r) == "ERROR: errors: run 1 had 3 errored requests");
}

TEST_CASE("verdict_line says an interrupted run is partial, whatever failed") {
  Report r = report_with({{"limit", Status::fail, "over"}}, Verdict::fail);
  r.interrupted = true;
  CHECK(verdict_line(r).starts_with("INTERRUPTED"));
}

TEST_CASE("render_human --quiet is the verdict line alone, colored only on request") {
  const Report r = report_with({{"limit", Status::fail, "over"}}, Verdict::fail);
  CHECK(render_human(r, TextStyle{false, true}) == "FAIL: limit: over\n");
  const std::string colored = render_human(r, TextStyle{true, true});
  CHECK(colored.find("\033[") != std::string::npos);
  CHECK(colored.find("FAIL: limit: over") != std::string::npos);
}

TEST_CASE("render_human lists every check and ends with the verdict") {
  const Report r = report_with(
      {{"limit", Status::pass, "max allowed 9 <= limit 10"}, {"exact", Status::skip, "without"}},
      Verdict::pass);
  const std::string text = render_human(r, TextStyle{false, false});
  CHECK(text.find("\033[") == std::string::npos);
  CHECK(text.find("max allowed 9 <= limit 10") != std::string::npos);
  CHECK(text.find("exact") != std::string::npos);
  CHECK(text.ends_with("PASS\n"));
}

namespace {

Report report_with_run() {
  Report r = report_with({{"limit", Status::pass, "max allowed 10 <= limit 10"}}, Verdict::pass);
  rlcheck::checks::RunStats run;
  run.run = 1;
  run.requests = 200;
  run.allowed = 10;
  run.denied = 190;
  run.duration_ms = 20;
  run.latency.p50 = 0.125;
  run.latency.p90 = 0.75;
  run.latency.p99 = 1.5;
  run.latency.p999 = 2.875;
  r.runs.push_back(run);
  r.summary.requests_per_second = 10'000;
  return r;
}

}  // namespace

TEST_CASE("render_human shows p50, p90, p99 and p999 per run, and the request rate") {
  const std::string text = render_human(report_with_run(), TextStyle{false, false});
  for (const char* column : {"p50 ms", "p90 ms", "p99 ms", "p999 ms"})
    CHECK(text.find(column) != std::string::npos);
  CHECK(text.find("0.750") != std::string::npos);
  // Percentiles to the histogram's precision: three significant digits.
  CHECK(text.find("2.88") != std::string::npos);
  CHECK(text.find("2.875") == std::string::npos);
  CHECK(text.find("10000 req/s") != std::string::npos);
  // Every line but the header (the target's own length) fits a 100-column terminal.
  size_t start = text.find('\n') + 1;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    CHECK(end - start <= 100);
    start = end + 1;
  }
}

TEST_CASE("verdict_line of an interrupted report says what failed so far") {
  Report r = report_with({{"limit", Status::fail, "1 of 1 runs over"}}, Verdict::interrupted);
  r.interrupted = true;
  CHECK(verdict_line(r) == "INTERRUPTED: partial results; so far limit: 1 of 1 runs over");
  r.checks = {{"limit", Status::pass, "fine"}};
  CHECK(verdict_line(r) == "INTERRUPTED: partial results");
}

TEST_CASE("render_compare names the failing checks of each target") {
  Report naive = report_with({{"limit", Status::fail, "4 of 4 runs over"},
                              {"exact", Status::skip, ""},
                              {"contract", Status::fail, "worst span 17 > 10"}},
                             Verdict::fail);
  Report lua = report_with({{"limit", Status::pass, "fine"}}, Verdict::pass);
  lua.target.strategy = "sliding-window";
  rlcheck::test::describe(lua);
  const std::string text = render_compare({naive, lua}, TextStyle{false, false});
  CHECK(text.find("failed checks") != std::string::npos);
  bool naive_row = false, lua_row = false;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    if (line.starts_with("naive ")) {
      naive_row = true;
      CHECK(line.ends_with("fail        limit,contract"));
    }
    if (line.starts_with("sliding-window ")) {
      lua_row = true;
      CHECK(line.ends_with("pass        -"));
    }
    start = end + 1;
  }
  CHECK(naive_row);
  CHECK(lua_row);
}

TEST_CASE("render_compare --quiet prints one named verdict line per target") {
  Report naive = report_with({{"limit", Status::fail, "4 of 4 runs over"}}, Verdict::fail);
  Report lua = report_with({{"limit", Status::pass, "fine"}}, Verdict::pass);
  lua.target.strategy = "sliding-window";
  rlcheck::test::describe(lua);
  CHECK(render_compare({naive, lua}, TextStyle{false, true}) ==
        "naive: FAIL: limit: 4 of 4 runs over\nsliding-window: PASS\n");
}

namespace {

Report http_report(const std::string& limit_source, const std::string& window_source) {
  Report r = report_with({{"limit", Status::pass, "fine"}}, Verdict::pass);
  r.mode = "http";
  rlcheck::test::describe(r);
  r.target.url = "http://127.0.0.1:8080/";
  rlcheck::test::describe(r);
  r.target.method = "GET";
  rlcheck::test::describe(r);
  r.params.limit = 5;
  r.params.window_ms = 10'000;
  r.params.limit_source = limit_source;
  r.params.window_source = window_source;
  return r;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

TEST_CASE("render_human header: where the limit and the window came from, compactly") {
  const TextStyle plain{false, false};
  CHECK(first_line(render_human(http_report("flag", "flag"), plain)).find("  limit 5 per 10s  ") !=
        std::string::npos);
  CHECK(first_line(render_human(http_report("advertised", "advertised"), plain))
            .find("limit 5 per 10s (advertised by the server)") != std::string::npos);
  CHECK(first_line(render_human(http_report("advertised", "default"), plain))
            .find("limit 5 (advertised) per 10s (default)") != std::string::npos);
  CHECK(first_line(render_human(http_report("flag", "advertised"), plain))
            .find("limit 5 per 10s (advertised)") != std::string::npos);
  Report from_reset = http_report("advertised", "advertised");
  from_reset.params.window_from_reset = true;
  CHECK(first_line(render_human(from_reset, plain))
            .find("limit 5 (advertised) per 10s (advertised reset)") != std::string::npos);
  // Redis limiters run with the values shown: nothing to qualify.
  Report redis = report_with({}, Verdict::pass);
  redis.params.limit_source = "default";
  redis.params.window_source = "default";
  const std::string header = first_line(render_human(redis, plain));
  CHECK(header.find("limit 10 per 1m  ") != std::string::npos);
  CHECK(header.find("default") == std::string::npos);
}

TEST_CASE("render_human header: a bucket is named by the burst and refill audited") {
  Report bucket = report_with({}, Verdict::pass);
  bucket.params.contract = "token-bucket";
  bucket.params.burst = 5;
  bucket.params.refill = "5/s";
  const std::string header = first_line(render_human(bucket, TextStyle{false, false}));
  CHECK(header.find("token-bucket burst 5, refill 5/s") != std::string::npos);
  CHECK(header.find("limit 10") == std::string::npos);
  CHECK(header.find("contract token-bucket") == std::string::npos);
}

TEST_CASE("render_human advertised line: only what was advertised, none when nothing was") {
  const TextStyle plain{false, false};
  Report r = http_report("flag", "flag");
  rlcheck::checks::RunStats run;
  run.run = 1;
  run.status_counts["200"] = 3;
  r.runs.push_back(run);
  CHECK(render_human(r, plain).find("advertised:") == std::string::npos);

  r.runs[0].advertised.limit_min = 5;
  r.runs[0].advertised.limit_max = 5;
  std::string text = render_human(r, plain);
  CHECK(text.find("advertised: limit 5\n") != std::string::npos);
  CHECK(text.find("remaining") == std::string::npos);

  r.runs[0].advertised.reset_min_s = 1;
  r.runs[0].advertised.reset_max_s = 10;
  r.runs[0].advertised.malformed = 2;
  r.runs[0].advertised.malformed_sample = "X-RateLimit-Remaining: not a number 'ten'";
  text = render_human(r, plain);
  CHECK(text.find("advertised: limit 5, reset 1-10s; 2 malformed, e.g. X-RateLimit-Remaining") !=
        std::string::npos);
  CHECK(text.find(" -s") == std::string::npos);
}

TEST_CASE("render_compare of endpoints gives each its own limit and where it came from") {
  Report a = report_with({{"limit", Status::pass, "fine"}}, Verdict::pass);
  a.mode = "http";
  rlcheck::test::describe(a);
  a.target.url = "http://127.0.0.1:8080/";
  rlcheck::test::describe(a);
  a.params.limit = 5;
  a.params.window_ms = 10'000;
  a.params.limit_source = "advertised";
  a.params.window_source = "advertised";
  Report b = a;
  b.target.url = "http://127.0.0.1:8081/";
  rlcheck::test::describe(b);
  b.params.limit = 20;
  b.params.window_ms = 60'000;
  b.params.limit_source = "flag";
  b.params.window_source = "default";
  const std::string text = render_compare({a, b}, TextStyle{false, false});
  CHECK(text.find("5/10s adv") != std::string::npos);
  CHECK(text.find("20/1m def") != std::string::npos);
  // The header names no single limit: the endpoints' differ.
  CHECK(text.substr(0, text.find('\n')).find("limit 5") == std::string::npos);
}

TEST_CASE("render_human says when a run stopped on errors, and which keys were left behind") {
  Report report =
      report_with({{"errors", Status::fail, "run 1 had 1 errored request"}}, Verdict::error);
  report.params.requests = 1200;
  rlcheck::checks::RunStats run;
  run.run = 1;
  run.requests = 412;
  run.stopped_on_errors = true;
  report.runs.push_back(run);
  report.keys_left = {"rlcheck:ab:lua:1", "rlcheck:ab:lua:1:calls"};
  const std::string text = render_human(report, TextStyle{});
  CHECK(text.find("run 1 stopped on errors after 412 of 1200 requests: no more were sent\n") !=
        std::string::npos);
  CHECK(text.find("keys left behind: rlcheck:ab:lua:1, rlcheck:ab:lua:1:calls") !=
        std::string::npos);
  CHECK(text.find("redirects") == std::string::npos);
  CHECK(text.find("reconnects") == std::string::npos);

  report.transport = {3, 0, 1, 2};
  report.params.topology = rlcheck::report::Topology{"cluster", 3, false};
  const std::string cluster = render_human(report, TextStyle{});
  CHECK(cluster.find("(cluster, 3 masters)") != std::string::npos);
  CHECK(cluster.find("redirects: moved 3, ask 0, tryagain 1\n") != std::string::npos);
  CHECK(cluster.find("reconnects: 2\n") != std::string::npos);
}

namespace {

rlcheck::checks::FaultWindow measured_pause() {
  rlcheck::checks::FaultWindow fault;
  fault.spec = "pause@1s+1s";
  fault.at_ns = 1'000'000'000;
  fault.until_ns = 2'000'000'000;
  fault.applied = true;
  fault.during_denied = 12;
  fault.during_errors = 3;
  fault.sent_after = 40;
  fault.recovered_after_ns = 35'200'000;
  return fault;
}

}  // namespace

TEST_CASE("render_human has a line per fault: its window, what it met, when decisions resumed") {
  Report report = report_with({{"recovery", Status::pass, "within 1000ms"}}, Verdict::pass);
  rlcheck::checks::RunStats run;
  run.run = 1;
  rlcheck::checks::FaultWindow unapplied;
  unapplied.spec = "restart@3s";
  unapplied.error = "restart needs the embedded Redis";
  run.faults = {measured_pause(), unapplied};
  report.runs.push_back(run);
  const std::string text = render_human(report, TextStyle{});
  CHECK(text.find("fault pause@1s+1s at 1000ms-2000ms: 0 allowed, 12 denied, 3 errors during; "
                  "decided normally again 35ms after\n") != std::string::npos);
  CHECK(text.find("fault restart@3s not applied: restart needs the embedded Redis\n") !=
        std::string::npos);

  // Several runs: each line says whose; a fault nothing was decided normally after says so.
  run.run = 2;
  run.faults = {measured_pause()};
  run.faults[0].recovered_after_ns.reset();
  report.runs.push_back(run);
  const std::string two = render_human(report, TextStyle{});
  CHECK(two.find("run 1: fault pause@1s+1s at 1000ms-2000ms") != std::string::npos);
  CHECK(two.find("run 2: fault pause@1s+1s at 1000ms-2000ms: 0 allowed, 12 denied, 3 errors "
                 "during; never decided normally again\n") != std::string::npos);
}

TEST_CASE("verdict_line: a worker lost from a shared test is why it could not be done") {
  Report r = report_with({{"limit", Status::pass, "max allowed 10 <= limit 10"}}, Verdict::error);
  r.workers.emplace();
  r.workers->session = "ci-42";
  r.workers->lost = "worker 2 (host-c) stopped answering during run 1";
  CHECK(verdict_line(r) ==
        "ERROR: worker 2 (host-c) stopped answering during run 1: the test could not be done");
  // A failed errors check is still the first reason given.
  r.checks.push_back({"errors", Status::fail, "run 1 had 3 errored requests > --max-errors 0"});
  CHECK(verdict_line(r) == "ERROR: errors: run 1 had 3 errored requests > --max-errors 0");
}

TEST_CASE("render_human: the session line, and who merged in worker 0's place") {
  Report r = report_with({{"limit", Status::pass, "max allowed 10 <= limit 10"}}, Verdict::error);
  r.workers.emplace();
  r.workers->session = "ci-42";
  r.workers->list = {{0, "host-a", 0, 0.5, 0.02, true, 1},
                     {1, "host-b", 60, -0.25, 0.03, false, 0}};
  r.workers->clock_uncertainty_ms = 0.05;
  r.workers->lost = "worker 0 (host-a) stopped answering during run 1";
  r.workers->merged_by = 1;
  const std::string text = render_human(r, TextStyle{});
  CHECK(text.find("session ci-42: 2 workers (0@host-a 0 requests (+0.500 ms), 1@host-b 60 requests "
                  "(-0.250 ms)); clocks agree to within 0.050 ms") != std::string::npos);
  CHECK(text.find("worker 1 merged the runs in worker 0's place") != std::string::npos);
}

TEST_CASE("render_human says how many requests were unknown, only when some were") {
  Report r = report_with_run();
  CHECK(render_human(r, TextStyle{false, false}).find("unknown") == std::string::npos);
  r.runs[0].errors = 7;
  r.runs[0].unknown = 5;
  r.runs.push_back(r.runs[0]);
  const std::string text = render_human(r, TextStyle{false, false});
  CHECK(text.find("10 unknown (errored after sending): possibly admitted") != std::string::npos);
}

TEST_CASE("render_human names a limiter clock the audits allowed for, and only that one") {
  Report r = report_with({{"limit", Status::pass, "fine"}}, Verdict::pass);
  rlcheck::checks::RunStats steady;
  steady.run = 1;
  steady.limiter_clock =
      rlcheck::engine::ClockDrift{"Redis TIME", 100'000, 2'000'000'000, 200'000, 0};
  rlcheck::checks::RunStats stepped;
  stepped.run = 2;
  stepped.limiter_clock =
      rlcheck::engine::ClockDrift{"Redis TIME", 4'000'000, 2'000'000'000, 200'000, 4'200'000};
  r.runs = {steady, stepped};
  const std::string text = render_human(r, TextStyle{false, false});
  INFO(text);
  CHECK(text.find("run 1: Redis TIME") == std::string::npos);
  CHECK(text.find("run 2: Redis TIME moved +4.000 ms against rlcheck's steady clock over 2.000 s "
                  "(+2000 ppm; 100 assumed): the audits allow 4.200 ms more\n") !=
        std::string::npos);
}
