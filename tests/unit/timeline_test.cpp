// The HTML report's timeline as checks/timeline bins it: under costs every figure counts units,
// and with several contracts each part's limit is drawn only where it bounds what the window
// line counts.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/timeline.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::ContractPart;
using rlcheck::checks::PartLineFit;
using rlcheck::checks::Timeline;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord costing(uint64_t seq, int64_t sent_ms, Outcome outcome, int32_t cost) {
  RequestRecord r;
  r.seq = seq;
  r.sent_ns = sent_ms * k_ms;
  r.replied_ns = r.sent_ns + k_ms;
  r.outcome = outcome;
  r.cost = cost;
  return r;
}

// Over one second: three admissions of 3, 5 and 7 units, a denial of 2, an error of 4.
std::vector<RequestRecord> costed_records() {
  return {costing(0, 0, Outcome::allowed, 3), costing(1, 100, Outcome::allowed, 5),
          costing(2, 200, Outcome::denied, 2), costing(3, 300, Outcome::error, 4),
          costing(4, 600, Outcome::allowed, 7)};
}

AdmissionRule half_second(int64_t limit) {
  AdmissionRule rule;
  rule.limit = limit;
  rule.window_ns = 500 * k_ms;
  return rule;
}

uint32_t total(const std::vector<uint32_t>& bins) {
  return std::accumulate(bins.begin(), bins.end(), 0U);
}

// What `outcome`'s records weigh: their costs, or one each.
uint32_t weight_of(const std::vector<RequestRecord>& records, Outcome outcome, bool units) {
  uint32_t sum = 0;
  for (const RequestRecord& record : records) {
    if (record.outcome == outcome)
      sum += units ? static_cast<uint32_t>(record.cost) : 1U;
  }
  return sum;
}

// The window line's value at the end of the bin holding `at_ms`.
uint32_t in_window_at(const Timeline& timeline, int64_t at_ms) {
  return timeline.series.front().in_window[static_cast<size_t>(at_ms * k_ms / timeline.bin_ns)];
}

}  // namespace

TEST_CASE("timeline: under costs the bars and the window line count units") {
  std::vector<RequestRecord> records = costed_records();
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  for (const bool units : {false, true}) {
    CAPTURE(units);
    const Timeline timeline =
        rlcheck::checks::build_timeline(identities, half_second(10), 1000 * k_ms, 0, units);
    CHECK(timeline.in_units == units);
    REQUIRE(timeline.series.size() == 1);
    const auto& series = timeline.series.front();
    CHECK(total(series.allowed) == weight_of(records, Outcome::allowed, units));
    CHECK(total(series.denied) == weight_of(records, Outcome::denied, units));
    CHECK(total(series.errors) == weight_of(records, Outcome::error, units));
    // Just before 500 ms the window holds the admissions sent at 0 and 100 ms; at 650 ms only
    // the one at 600 ms.
    CHECK(in_window_at(timeline, 450) == (units ? 3U + 5U : 2U));
    CHECK(in_window_at(timeline, 650) == (units ? 7U : 1U));
  }
}

TEST_CASE("timeline: a part's limit is drawn only against the window it bounds") {
  std::vector<RequestRecord> records = costed_records();
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  Timeline timeline =
      rlcheck::checks::build_timeline(identities, half_second(10), 1000 * k_ms, 0, true);
  ContractPart same_window{"sliding:10/500ms", "sliding", half_second(10)};
  ContractPart longer{"sliding:50/1m", "sliding", half_second(50)};
  longer.rule.window_ns = 60'000 * k_ms;
  ContractPart group = same_window;
  group.spec = "group:sliding:30/500ms";
  group.per_group = true;
  ContractPart requests = same_window;
  requests.spec = "requests:sliding:4/500ms";
  requests.counts_requests = true;
  ContractPart bucket{"token-bucket:6,2/s", "token-bucket", {}};
  bucket.rule.kind = AdmissionRule::Kind::bucket;
  bucket.rule.burst = 6;
  bucket.rule.tokens_per_ns = 2e-9;
  rlcheck::checks::add_timeline_parts(timeline, {same_window, longer, group, requests, bucket});
  REQUIRE(timeline.parts.size() == 5);
  CHECK(timeline.parts[0].fit == PartLineFit::drawn);
  CHECK(timeline.parts[0].line == doctest::Approx(10));
  CHECK(timeline.parts[1].fit == PartLineFit::other_window);
  CHECK(timeline.parts[2].fit == PartLineFit::per_group);
  CHECK(timeline.parts[3].fit == PartLineFit::counts_requests);
  // A bucket over the timeline's half second: its burst and a half second's refill.
  CHECK(timeline.parts[4].fit == PartLineFit::drawn);
  CHECK(timeline.parts[4].line == doctest::Approx(6 + 2 * 0.5));

  // Counting requests, a requests: part is drawn like any other.
  Timeline by_request =
      rlcheck::checks::build_timeline(identities, half_second(10), 1000 * k_ms, 0, false);
  rlcheck::checks::add_timeline_parts(by_request, {requests});
  CHECK(by_request.parts.front().fit == PartLineFit::drawn);
}

namespace {

RequestRecord span_record(uint64_t seq, int64_t sent_ms, int64_t replied_ms, Outcome outcome) {
  RequestRecord r;
  r.seq = seq;
  r.sent_ns = sent_ms * k_ms;
  r.replied_ns = replied_ms * k_ms;
  r.outcome = outcome;
  return r;
}

// The most of `bins` over the bins that cover [from_ms, to_ms) of a 2 s timeline (5 ms bins).
uint32_t most_between(const std::vector<uint32_t>& bins, int64_t from_ms, int64_t to_ms) {
  uint32_t most = 0;
  for (int64_t ms = from_ms; ms < to_ms; ms += 5)
    most = std::max(most, bins[static_cast<size_t>(ms / 5)]);
  return most;
}

}  // namespace

TEST_CASE("timeline in flight: sure spans by the hold, possible spans send to reply and slack") {
  // Three admissions sent at 0, 10 and 20 ms and answered 400 ms later: held at least 300 ms,
  // each surely in flight over [reply - 300, send + 300), all three over [120, 300) ms. One more
  // from 1000 to 1400 ms; a denial; and a timeout sent at 1800 ms, possibly in flight for ever.
  std::vector<RequestRecord> records = {span_record(0, 0, 400, Outcome::allowed),
                                        span_record(1, 10, 410, Outcome::allowed),
                                        span_record(2, 20, 420, Outcome::allowed),
                                        span_record(3, 30, 31, Outcome::denied),
                                        span_record(4, 1000, 1400, Outcome::allowed),
                                        [] {
                                          RequestRecord timeout =
                                              span_record(5, 1800, 1900, Outcome::error);
                                          timeout.error = rlcheck::engine::ErrorKind::timeout;
                                          return timeout;
                                        }()};
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  AdmissionRule rule;
  rule.limit = 3;
  rule.window_ns = 1000 * k_ms;
  Timeline timeline = rlcheck::checks::build_timeline(identities, rule, 2000 * k_ms, 0);
  rlcheck::checks::add_in_flight(timeline, identities, 2, 300 * k_ms, 50 * k_ms);
  CHECK(timeline.in_flight);
  CHECK(timeline.contract_line == 2);
  const auto& series = timeline.series.front();
  REQUIRE(series.in_flight_surely.size() == static_cast<size_t>(rlcheck::checks::k_timeline_bins));
  CHECK(most_between(series.in_flight_surely, 0, 100) == 0);
  CHECK(most_between(series.in_flight_surely, 120, 300) == 3);
  CHECK(most_between(series.in_flight_surely, 330, 1000) == 0);
  CHECK(most_between(series.in_flight_surely, 1100, 1300) == 1);
  CHECK(most_between(series.in_flight_possibly, 20, 400) == 3);
  CHECK(most_between(series.in_flight_possibly, 480, 1000) == 0);  // 420 ms + 50 ms of slack
  CHECK(most_between(series.in_flight_possibly, 1000, 1450) == 1);
  CHECK(most_between(series.in_flight_possibly, 1800, 2000) == 1);  // the timeout, for ever
  // Without a hold nothing is surely in flight.
  rlcheck::checks::add_in_flight(timeline, identities, 2, 0, 50 * k_ms);
  CHECK(most_between(timeline.series.front().in_flight_surely, 0, 2000) == 0);
}

TEST_CASE("timeline ban spans: each shown identity gets its own") {
  std::vector<RequestRecord> records = {span_record(0, 0, 1, Outcome::allowed),
                                        span_record(1, 5, 6, Outcome::allowed)};
  records[1].identity = 1;
  const auto identities = rlcheck::checks::split_by_identity(records, 2);
  AdmissionRule rule;
  rule.limit = 1;
  rule.window_ns = 1000 * k_ms;
  Timeline timeline = rlcheck::checks::build_timeline(identities, rule, 1000 * k_ms, 0);
  rlcheck::checks::add_ban_spans(
      timeline,
      {{1, 100 * k_ms, 300 * k_ms}, {0, 200 * k_ms, 400 * k_ms}, {1, 500 * k_ms, 600 * k_ms}});
  REQUIRE(timeline.series.size() == 2);
  for (const auto& series : timeline.series) {
    if (series.identity == 0) {
      CHECK(series.ban_spans == std::vector<std::pair<int64_t, int64_t>>{{200 * k_ms, 400 * k_ms}});
    } else {
      CHECK(series.ban_spans.size() == 2);
    }
  }
}

TEST_CASE("timeline queue waits: each bin's longest wait beyond the unloaded latency") {
  // Admissions answered 3, 203 and 403 ms after their sends at 0, 100 and 1500 ms; a denial
  // answered in 3 ms. Unloaded 3 ms: waits of 0, 200 and 400 ms.
  std::vector<RequestRecord> records = {
      span_record(0, 0, 3, Outcome::allowed), span_record(1, 100, 303, Outcome::allowed),
      span_record(2, 200, 203, Outcome::denied), span_record(3, 1500, 1903, Outcome::allowed)};
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  AdmissionRule rule;
  rule.limit = 3;
  rule.window_ns = 1000 * k_ms;
  Timeline timeline = rlcheck::checks::build_timeline(identities, rule, 2000 * k_ms, 0);
  rlcheck::checks::QueueAudit queue;
  queue.unloaded_ns = 3 * k_ms;
  queue.promised_wait_ns = 250 * k_ms;
  queue.tolerance_ns = 100 * k_ms;
  rlcheck::checks::add_queue_waits(timeline, identities, queue);
  CHECK(timeline.promised_wait_ns == 250 * k_ms);
  CHECK(timeline.wait_tolerance_ns == 100 * k_ms);
  const std::vector<int64_t>& waits = timeline.series.front().wait_most_ns;
  REQUIRE(waits.size() == static_cast<size_t>(rlcheck::checks::k_timeline_bins));
  CHECK(waits[0] == 0);
  CHECK(waits[20] == 200 * k_ms);   // sent at 100 ms, bins of 5 ms
  CHECK(waits[40] == -1);           // the denial's bin: no admission
  CHECK(waits[300] == 400 * k_ms);  // sent at 1500 ms
  CHECK(std::count(waits.begin(), waits.end(), -1) == rlcheck::checks::k_timeline_bins - 3);
}

TEST_CASE("timeline slow-down waits: a bin past its line holds a request the delay check fails") {
  // Unloaded 3 ms. Promises as audit_slow_down gives them, in record order (-1: not judged).
  std::vector<RequestRecord> records = {
      span_record(0, 0, 3, Outcome::allowed),
      // Bin 20: the longer wait (700 ms, promised 800) keeps its promise; the shorter (400 ms,
      // promised 200, tolerance 100 ms) fails: the line is the failing one's.
      span_record(1, 100, 803, Outcome::allowed), span_record(2, 101, 504, Outcome::allowed),
      // Bin 100: 1100 ms where 1000 ms and the tolerance are allowed, and a short one: kept.
      span_record(3, 500, 1603, Outcome::allowed), span_record(4, 502, 605, Outcome::allowed),
      span_record(5, 1000, 1003, Outcome::denied),
      // Bin 300: not judged (its window may reach back before the run).
      span_record(6, 1500, 3003, Outcome::allowed)};
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  AdmissionRule rule;
  rule.limit = 3;
  rule.window_ns = 1000 * k_ms;
  Timeline timeline = rlcheck::checks::build_timeline(identities, rule, 2000 * k_ms, 0);
  rlcheck::checks::SlowDownAudit audit;
  audit.unloaded_ns = 3 * k_ms;
  rlcheck::checks::SlowDownPromises promises;
  promises.promised_ns = {0, 800 * k_ms, 200 * k_ms, 1000 * k_ms, 0, -1};
  promises.starts = {0, 6};
  rlcheck::checks::add_slow_down_waits(timeline, identities, audit, promises);
  const auto& series = timeline.series.front();
  const auto bins = static_cast<size_t>(rlcheck::checks::k_timeline_bins);
  REQUIRE(series.wait_most_ns.size() == bins);
  REQUIRE(series.wait_promised_ns.size() == bins);
  REQUIRE(series.wait_allowed_ns.size() == bins);
  CHECK(series.wait_most_ns[0] == 0);
  CHECK(series.wait_promised_ns[0] == 0);
  CHECK(series.wait_allowed_ns[0] == 100 * k_ms);
  CHECK(series.wait_most_ns[20] == 700 * k_ms);
  CHECK(series.wait_promised_ns[20] == 200 * k_ms);
  CHECK(series.wait_allowed_ns[20] == 300 * k_ms);
  CHECK(series.wait_most_ns[20] > series.wait_allowed_ns[20]);
  CHECK(series.wait_most_ns[100] == 1100 * k_ms);
  CHECK(series.wait_promised_ns[100] == 1000 * k_ms);
  CHECK(series.wait_allowed_ns[100] == 1100 * k_ms);
  CHECK(series.wait_most_ns[200] == -1);  // the denial's
  CHECK(series.wait_most_ns[300] == -1);
  CHECK(series.wait_promised_ns[300] == -1);
  CHECK(std::count(series.wait_most_ns.begin(), series.wait_most_ns.end(), -1) ==
        rlcheck::checks::k_timeline_bins - 3);
}
