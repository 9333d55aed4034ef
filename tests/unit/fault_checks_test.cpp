#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "checks/fault_checks.hpp"

using namespace rlcheck::checks;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t ms = 1'000'000;

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

RequestRecord request(uint64_t seq, int64_t sent_ms, int64_t replied_ms, Outcome outcome) {
  RequestRecord record;
  record.seq = seq;
  record.sent_ns = sent_ms * ms;
  record.replied_ns = replied_ms * ms;
  record.outcome = outcome;
  return record;
}

FaultWindow pause_window(int64_t at_ms, int64_t until_ms) {
  FaultWindow fault;
  fault.spec = "pause@1s+1s";
  fault.at_ns = at_ms * ms;
  fault.until_ns = until_ms * ms;
  fault.applied = true;
  return fault;
}

// A run with one measured fault over [1000, 2000] ms.
RunStats faulted_run(int number, const std::vector<RequestRecord>& records) {
  RunStats run;
  run.run = number;
  run.faults = {pause_window(1000, 2000)};
  measure_faults(run.faults, records);
  return run;
}

CheckParams expecting(const char* mode) {
  CheckParams params;
  params.expect_fail_mode = mode;
  return params;
}

// A fail-closed limiter: allowed before, refused (errors) during, allowed after.
std::vector<RequestRecord> fail_closed_records() {
  return {request(0, 900, 905, Outcome::allowed),    // before
          request(1, 990, 1002, Outcome::allowed),   // sent before, answered just after: racy
          request(2, 1100, 1300, Outcome::error),    // refused while it held
          request(3, 1500, 1700, Outcome::error),    //
          request(4, 1950, 2010, Outcome::allowed),  // waited for Redis to come back
          request(5, 2020, 2060, Outcome::error),    // the reconnect
          request(6, 2040, 2045, Outcome::denied),   // decided normally again
          request(7, 2100, 2102, Outcome::allowed)};
}

}  // namespace

TEST_CASE("a fault's during counts are the requests whose span overlaps it") {
  const RunStats run = faulted_run(1, fail_closed_records());
  const FaultWindow& fault = run.faults[0];
  CHECK(fault.during_allowed == 2);  // seq 1 and 4
  CHECK(fault.during_denied == 0);
  CHECK(fault.during_errors == 2);
  // Neither overlapping allowed request was decided while the fault held.
  CHECK(fault.allowed_while_faulted == 0);
  CHECK(fault.refused_while_faulted == 2);
  REQUIRE(fault.first_refused_while_faulted);
  CHECK(fault.first_refused_while_faulted->seq == 2);
  // First sent after the end and decided normally: seq 6, replied 45 ms after the end.
  REQUIRE(fault.recovered_after_ns);
  CHECK(*fault.recovered_after_ns == 45 * ms);
  CHECK(fault.sent_after == 3);
  CHECK(fault.errors_after == 1);
  CHECK(*fault.last_error_after_ns == 20 * ms);
}

TEST_CASE("a fault that was not applied is not measured") {
  std::vector<FaultWindow> faults{pause_window(1000, 2000)};
  faults[0].applied = false;
  measure_faults(faults, fail_closed_records());
  CHECK(faults[0].during_errors == 0);
  CHECK_FALSE(faults[0].recovered_after_ns);
}

TEST_CASE("after one fault, recovery looks only until the next begins") {
  std::vector<FaultWindow> faults{pause_window(1000, 2000), pause_window(3000, 4000)};
  const std::vector<RequestRecord> records{request(0, 2500, 2510, Outcome::error),
                                           request(1, 3500, 3600, Outcome::error),
                                           request(2, 4100, 4101, Outcome::allowed)};
  measure_faults(faults, records);
  CHECK(faults[0].sent_after == 1);
  CHECK_FALSE(faults[0].recovered_after_ns);
  CHECK(*faults[1].recovered_after_ns == 101 * ms);
}

TEST_CASE("fail-mode skips without an expectation or without an applied fault") {
  const RunStats run = faulted_run(1, fail_closed_records());
  CHECK(check_fail_mode({run}, {}).status == Status::skip);
  CHECK(mentions(check_fail_mode({run}, {}).detail, "--expect-fail-mode"));
  RunStats unapplied = run;
  unapplied.faults[0].applied = false;
  const CheckResult skipped = check_fail_mode({unapplied}, expecting("closed"));
  CHECK(skipped.status == Status::skip);
  CHECK(skipped.detail == "no fault was applied");
}

TEST_CASE("fail-mode closed passes a limiter that refused while the fault held") {
  const CheckResult result =
      check_fail_mode({faulted_run(1, fail_closed_records())}, expecting("closed"));
  CHECK(result.status == Status::pass);
  CHECK(mentions(result.detail, "0 allowed, 2 denied or errored"));
}

TEST_CASE("fail-mode open fails that limiter, naming the first refused request") {
  const CheckResult result =
      check_fail_mode({faulted_run(1, fail_closed_records())}, expecting("open"));
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "2 requests were denied or errored"));
  CHECK(mentions(result.detail, "run 1 seq 2 at 1100ms during pause@1s+1s"));
}

TEST_CASE("fail-mode closed fails a limiter that let requests through while Redis was down") {
  const std::vector<RequestRecord> open_records{
      request(0, 900, 905, Outcome::allowed), request(1, 1200, 1400, Outcome::allowed),
      request(2, 1300, 1500, Outcome::allowed), request(3, 2100, 2101, Outcome::denied)};
  const CheckResult closed =
      check_fail_mode({faulted_run(1, {}), faulted_run(2, open_records)}, expecting("closed"));
  CHECK(closed.status == Status::fail);
  CHECK(mentions(closed.detail, "2 requests were allowed while 2 faults held"));
  CHECK(mentions(closed.detail, "run 2 seq 1 at 1200ms"));
  CHECK(check_fail_mode({faulted_run(2, open_records)}, expecting("open")).status == Status::pass);
}

TEST_CASE("a request sent before CLIENT PAUSE returned may have been decided before the pause") {
  // The pause was asked for at 1000 ms and had surely begun when the command returned, at 1012 ms.
  FaultWindow pause = pause_window(1000, 2000);
  pause.held_from_ns = 1012 * ms;
  RunStats run;
  run.run = 1;
  run.faults = {pause};
  const std::vector<RequestRecord> records{
      request(0, 1000, 1004, Outcome::allowed),  // may have reached Redis before the pause
      request(1, 1100, 1300, Outcome::error)};
  measure_faults(run.faults, records);
  CHECK(run.faults[0].allowed_while_faulted == 0);
  CHECK(run.faults[0].during_allowed == 1);
  CHECK(check_fail_mode({run}, expecting("closed")).status == Status::pass);

  // Sent once the pause surely held, the same answer is a failure.
  run.faults = {pause};
  const std::vector<RequestRecord> after{request(0, 1012, 1016, Outcome::allowed)};
  measure_faults(run.faults, after);
  CHECK(run.faults[0].allowed_while_faulted == 1);
  CHECK(check_fail_mode({run}, expecting("closed")).status == Status::fail);
}

TEST_CASE("an error that touches a fault counts against fail-open, even answered after it") {
  const CheckResult result = check_fail_mode(
      {faulted_run(1, {request(0, 1900, 2500, Outcome::error)})}, expecting("open"));
  CHECK(result.status == Status::fail);
}

TEST_CASE("recovery passes within --recovery and names the slowest fault") {
  const CheckResult result = check_recovery({faulted_run(3, fail_closed_records())}, {});
  CHECK(result.status == Status::pass);
  CHECK(mentions(result.detail, "within 1000ms"));
  CHECK(mentions(result.detail, "slowest 45ms (run 3, pause@1s+1s)"));
}

TEST_CASE("recovery fails when the first normal decision came too late") {
  CheckParams params;
  params.recovery_ms = 40;
  const CheckResult result = check_recovery({faulted_run(1, fail_closed_records())}, params);
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "45ms after it ended > --recovery 40ms"));
}

TEST_CASE("recovery fails when errors continued past --recovery") {
  const CheckResult result = check_recovery(
      {faulted_run(
          1, {request(0, 2010, 2020, Outcome::allowed), request(1, 3500, 3510, Outcome::error)})},
      {});
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "still errored 1500ms after it ended"));
}

TEST_CASE("recovery fails when nothing was decided normally after the fault") {
  const CheckResult result =
      check_recovery({faulted_run(1, {request(0, 2010, 2020, Outcome::error)})}, {});
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "no request was decided normally again"));
}

TEST_CASE("recovery skips without an applied fault or a request after it") {
  CHECK(check_recovery({RunStats{}}, {}).status == Status::skip);
  const CheckResult late = check_recovery({faulted_run(1, {})}, {});
  CHECK(late.status == Status::skip);
  CHECK(mentions(late.detail, "no request was sent after"));
}
