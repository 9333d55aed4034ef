// Several contracts audited together on fixed record sets: each part's worst span on its own,
// lock-outs only where every part had room, hints against the latest of the parts' waits, the
// --consume-on-deny readings and group parts.

#include <doctest/doctest.h>

#include <vector>

#include "checks/run_stats.hpp"
#include "engine/record_log.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::AuditParams;
using rlcheck::checks::ContractPart;
using rlcheck::checks::RunStats;
using rlcheck::engine::Outcome;
using rlcheck::engine::RecordLog;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord request(uint64_t seq, int64_t sent_ms, Outcome outcome, uint32_t identity = 0,
                      std::optional<int64_t> retry_ms = std::nullopt) {
  RequestRecord r;
  r.seq = seq;
  r.identity = identity;
  r.sent_ns = sent_ms * k_ms;
  r.replied_ns = r.sent_ns + k_ms;
  r.outcome = outcome;
  r.retry_ms = retry_ms;
  r.hint_expected = outcome == Outcome::denied;
  return r;
}

ContractPart sliding(int64_t limit, int64_t window_ms, const char* spec) {
  ContractPart part;
  part.spec = spec;
  part.name = "sliding";
  part.rule.limit = limit;
  part.rule.window_ns = window_ms * k_ms;
  part.rule.clock_ns = k_ms;
  return part;
}

AuditParams audit_of(std::vector<ContractPart> parts, int64_t identities = 1) {
  AuditParams audit;
  audit.rule = parts.front().rule;
  audit.parts = std::move(parts);
  audit.identities = identities;
  audit.fresh_state = true;
  audit.tolerance.window_ms = 10'000;
  return audit;
}

RunStats audited(const std::vector<RequestRecord>& records, const AuditParams& audit) {
  RunStats stats;
  RecordLog log(records);
  rlcheck::checks::audit_run(stats, log, 0, audit);
  return stats;
}

// 5 per 1 s and 10 per 10 s, one request every 100 ms for 3 s: seconds 0 and 1 admit their
// first 5 (the second part is full after 1.4 s), everything later is denied. `consumed`:
// the first 5 of every later second pass the first part before the second denies them.
std::vector<RequestRecord> two_windows_run() {
  std::vector<RequestRecord> records;
  for (int64_t i = 0; i < 30; ++i) {
    const int64_t t = i * 100;
    const bool admitted = t < 2000 && (t % 1000) < 500;
    records.push_back(
        request(static_cast<uint64_t>(i), t, admitted ? Outcome::allowed : Outcome::denied));
  }
  return records;
}

}  // namespace

TEST_CASE("several contracts: each part's worst span is judged on its own") {
  const auto audit = audit_of({sliding(5, 1000, "sliding:5/1s"), sliding(10, 10'000, "b")});
  const RunStats stats = audited(two_windows_run(), audit);
  REQUIRE(stats.parts.size() == 2);
  CHECK(stats.parts[0].contract.worst.count == 5);
  CHECK_FALSE(stats.parts[0].contract.worst.exceeded());
  CHECK(stats.parts[1].contract.worst.count == 10);
  CHECK_FALSE(stats.parts[1].contract.worst.exceeded());
  // Every denial had a full part: none is a lock-out.
  CHECK(stats.lockouts.judged == 20);
  CHECK(stats.lockouts.count == 0);

  // The same admissions judged as the first part alone: the denials of the third second came
  // while it had room.
  const RunStats alone = audited(two_windows_run(), audit_of({sliding(5, 1000, "a")}));
  CHECK(alone.lockouts.count > 0);
  // ... and as a limit of 10 per 10 s alone, 5 per second is too strict.
  const auto over = audit_of({sliding(4, 1000, "sliding:4/1s"), sliding(10, 10'000, "b")});
  const RunStats tight = audited(two_windows_run(), over);
  CHECK(tight.parts[0].contract.worst.exceeded());
  CHECK(tight.peak.exceeded());
}

TEST_CASE("several contracts: a denial is a lock-out only where every part had room") {
  // 5 per 1 s and 10 per 10 s; admissions at 0..400 ms and 1000..1400 ms fill the second part.
  // A denial at 2500 ms: the first part has room, the second none: no lock-out. A denial at
  // 10'500 ms, once the first five have left the second part: both have room: a lock-out.
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  for (const int64_t t : {0, 100, 200, 300, 400, 1000, 1100, 1200, 1300, 1400})
    records.push_back(request(seq++, t, Outcome::allowed));
  records.push_back(request(seq++, 2500, Outcome::denied));
  records.push_back(request(seq++, 10'500, Outcome::denied));
  const RunStats stats =
      audited(records, audit_of({sliding(5, 1000, "sliding:5/1s"), sliding(10, 10'000, "x")}));
  CHECK(stats.lockouts.judged == 2);
  CHECK(stats.lockouts.count == 1);
  REQUIRE(stats.lockouts.worst);
  CHECK(stats.lockouts.worst->seq == 11);
  CHECK_FALSE(stats.lockouts.worst->part.empty());
}

TEST_CASE("--consume-on-deny checked: denials may have used up the parts checked before") {
  // 5 per 1 s then 10 per 10 s, as Flask-Limiter checks them: the ten admissions fill the
  // second part; from 9500 ms five requests pass the first part and are denied by the second,
  // so at 10'100 ms (the second part has room again) the first is full of them.
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  for (const int64_t t : {0, 100, 200, 300, 400, 1000, 1100, 1200, 1300, 1400})
    records.push_back(request(seq++, t, Outcome::allowed));
  for (const int64_t t : {9500, 9600, 9700, 9800, 9900})
    records.push_back(request(seq++, t, Outcome::denied));
  records.push_back(request(seq++, 10'100, Outcome::denied));
  auto first = sliding(5, 1000, "sliding:5/1s");
  auto second = sliding(10, 10'000, "sliding:10/10s");
  // The strict reading: at 10'100 ms both parts had room by the admissions alone; read as
  // checked, none would (what the contract fit proposes: fit_consume_on_deny).
  const RunStats strict = audited(records, audit_of({first, second}));
  CHECK(strict.lockouts.count == 1);
  // Checked: the first part counts the five denials before it: no room, no lock-out. The
  // denials at 9500..9900 ms are no lock-outs either way (the second part was full).
  first.counts_denials = true;
  const RunStats checked = audited(records, audit_of({first, second}));
  CHECK(checked.lockouts.judged == strict.lockouts.judged);
  CHECK(checked.lockouts.count == 0);
}

TEST_CASE("several contracts: a hint is judged against the latest of the parts' waits") {
  // 2 per 1 s and 3 per 10 s: admissions at 0, 100 and 1000 ms fill the second part until
  // 10'000 ms (plus the reply); a denial at 1200 ms must wait for that, not for the first part
  // (room again at 2000 ms).
  std::vector<RequestRecord> records = {request(0, 0, Outcome::allowed),
                                        request(1, 100, Outcome::allowed),
                                        request(2, 1000, Outcome::allowed)};
  auto audit = audit_of({sliding(2, 1000, "a"), sliding(3, 10'000, "b")});
  records.push_back(request(3, 1200, Outcome::denied, 0, 8800));
  const RunStats right = audited(records, audit);
  CHECK(right.retry_accuracy.errors.size() == 1);
  CHECK(right.retry_accuracy.early == 0);
  CHECK(right.retry_accuracy.late == 0);
  // A hint naming the first part's wait alone is early by about 8 s.
  records.back().retry_ms = 800;
  const RunStats early = audited(records, audit);
  CHECK(early.retry_accuracy.early == 1);
}

TEST_CASE("a group: part counts every identity of a group together") {
  // Two identities in one group, 3 each per 10 s, 4 per 10 s for the group: a limiter that
  // checks only the identity's own limit lets 6 through.
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  for (const int64_t t : {0, 100, 200}) {
    records.push_back(request(seq++, t, Outcome::allowed, 0));
    records.push_back(request(seq++, t + 50, Outcome::allowed, 1));
  }
  auto group = sliding(4, 10'000, "group:sliding:4/10s");
  group.per_group = true;
  auto audit = audit_of({sliding(3, 10'000, "sliding:3/10s"), group}, 2);
  audit.group_size = 2;
  const RunStats stats = audited(records, audit);
  CHECK_FALSE(stats.parts[0].contract.worst.exceeded());
  CHECK(stats.parts[1].contract.worst.exceeded());
  CHECK(stats.parts[1].contract.worst.count == 6);
  CHECK(stats.parts[1].per_group);
  // Groups of one: each identity's 3 are within 4.
  audit.group_size = 1;
  CHECK_FALSE(audited(records, audit).parts[1].contract.worst.exceeded());
}

TEST_CASE("a group part's worst span names its group; the run's, the group's first member") {
  // Four identities, groups of two: only group 1 (identities 2 and 3) goes over its 4.
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  for (const int64_t t : {0, 100, 200}) {
    records.push_back(request(seq++, t, Outcome::allowed, 2));
    records.push_back(request(seq++, t + 50, Outcome::allowed, 3));
  }
  records.push_back(request(seq++, 300, Outcome::allowed, 0));
  auto group = sliding(4, 10'000, "group:sliding:4/10s");
  group.per_group = true;
  auto audit = audit_of({sliding(3, 10'000, "sliding:3/10s"), group}, 4);
  audit.group_size = 2;
  const RunStats stats = audited(records, audit);
  REQUIRE(stats.parts[1].contract.worst.exceeded());
  CHECK(stats.parts[1].contract.worst_identity == 1);
  CHECK(stats.contract.worst_identity == 2);
}

namespace {

RequestRecord costing(RequestRecord record, int32_t cost) {
  record.cost = cost;
  return record;
}

AuditParams weighted(const ContractPart& part) {
  AuditParams audit;
  audit.rule = part.rule;
  audit.weighted = true;
  audit.fresh_state = true;
  audit.tolerance.window_ms = 10'000;
  return audit;
}

}  // namespace

TEST_CASE("costs: every contract counts units, and a denial needs room for its cost") {
  const auto part = sliding(10, 10'000, "sliding:10/10s");
  // 4 + 3 + 2 = 9 units admitted: a request of 2 had no room (not a lock-out), one of 1 had.
  std::vector<RequestRecord> records = {
      costing(request(0, 0, Outcome::allowed), 4), costing(request(1, 100, Outcome::allowed), 3),
      costing(request(2, 200, Outcome::allowed), 2), costing(request(3, 300, Outcome::denied), 2),
      costing(request(4, 400, Outcome::denied), 1)};
  const RunStats stats = audited(records, weighted(part));
  CHECK(stats.parts.empty());  // one contract: reported as one
  CHECK(stats.weighted);
  CHECK(stats.peak.count == 9);
  CHECK_FALSE(stats.peak.exceeded());
  CHECK(stats.lockouts.judged == 2);
  CHECK(stats.lockouts.count == 1);
  REQUIRE(stats.lockouts.worst);
  CHECK(stats.lockouts.worst->seq == 4);

  // Counted as requests, 3 admissions are far below 10; counted in units, 4 + 3 + 5 are not.
  records[2].cost = 5;
  const RunStats over = audited(records, weighted(part));
  CHECK(over.peak.count == 12);
  CHECK(over.peak.exceeded());
}

TEST_CASE("costs: a first-hit window counts units, and a denial needs room for its cost") {
  ContractPart part;
  part.spec = "fixed:10/10s@first-hit";
  part.name = "fixed";
  part.rule.kind = AdmissionRule::Kind::first_hit;
  part.rule.limit = 10;
  part.rule.window_ns = 10'000 * k_ms;
  part.rule.clock_ns = k_ms;
  part.rule.first_hit_anchor = true;
  // The window opens at 0: 4 + 3 + 2 = 9 units; a request of 2 had no room, one of 1 had.
  std::vector<RequestRecord> records = {
      costing(request(0, 0, Outcome::allowed), 4), costing(request(1, 100, Outcome::allowed), 3),
      costing(request(2, 200, Outcome::allowed), 2), costing(request(3, 300, Outcome::denied), 2),
      costing(request(4, 400, Outcome::denied), 1)};
  const RunStats stats = audited(records, weighted(part));
  CHECK(stats.peak.count == 9);
  CHECK_FALSE(stats.peak.exceeded());
  CHECK(stats.lockouts.judged == 2);
  CHECK(stats.lockouts.count == 1);
  REQUIRE(stats.lockouts.worst);
  CHECK(stats.lockouts.worst->seq == 4);
  // 4 + 3 + 5 units in one window: over.
  records[2].cost = 5;
  const RunStats over = audited(records, weighted(part));
  CHECK(over.peak.count == 12);
  CHECK(over.peak.exceeded());
}

TEST_CASE("costs: a sliding-window counter fits a cost c while its estimate is below L - c + 1") {
  ContractPart part;
  part.spec = "sliding-counter:10/10s";
  part.name = "sliding-counter";
  part.rule.kind = AdmissionRule::Kind::sliding_counter;
  part.rule.limit = 10;
  part.rule.window_ns = 10'000 * k_ms;
  part.rule.clock_ns = k_ms;
  // Window 0 admits 4 + 3 + 2 = 9 units (from 1 s: surely in it, whatever the clock). At 10.5 s
  // the estimate is 9 x 0.95 = 8.55: a request of 3 does not fit (10.55 >= 10), one of 1 at
  // 10.6 s does (8.46 < 10). The request of 3 fits once 9 x (1 - f) < 8, at 11.111 s: 611 ms
  // after it.
  std::vector<RequestRecord> records = {costing(request(0, 1000, Outcome::allowed), 4),
                                        costing(request(1, 1100, Outcome::allowed), 3),
                                        costing(request(2, 1200, Outcome::allowed), 2),
                                        costing(request(3, 10'500, Outcome::denied, 0, 611), 3),
                                        costing(request(4, 10'600, Outcome::denied, 0, 0), 1)};
  const RunStats stats = audited(records, weighted(part));
  CHECK(stats.lockouts.judged == 2);
  CHECK(stats.lockouts.count == 1);
  REQUIRE(stats.lockouts.worst);
  CHECK(stats.lockouts.worst->seq == 4);
  // The hint of the request of 3: right (the one of 1, with room, is not judged).
  CHECK(stats.retry_accuracy.errors.size() == 1);
  CHECK(stats.retry_accuracy.early == 0);
  CHECK(stats.retry_accuracy.late == 0);
  // Told the wait for one unit (the estimate below 10 at once): early.
  records[3].retry_ms = 100;
  CHECK(audited(records, weighted(part)).retry_accuracy.early == 1);
}

TEST_CASE("costs: a hint is the wait until the request's own cost fits") {
  // 10 per 10 s: 4 units at 0 ms, 6 at 1000 ms. A request of 5 at 2000 ms needs 5 free: the
  // first 4 leaving leaves 6, so it waits for both, until 11'000 ms. A request of 4 at 2500 ms
  // needs the first 4 gone: until 10'000 ms.
  const auto part = sliding(10, 10'000, "sliding:10/10s");
  std::vector<RequestRecord> records = {costing(request(0, 0, Outcome::allowed), 4),
                                        costing(request(1, 1000, Outcome::allowed), 6),
                                        costing(request(2, 2000, Outcome::denied, 0, 9000), 5),
                                        costing(request(3, 2500, Outcome::denied, 0, 7500), 4)};
  const RunStats stats = audited(records, weighted(part));
  CHECK(stats.retry_accuracy.errors.size() == 2);
  CHECK(stats.retry_accuracy.early == 0);
  CHECK(stats.retry_accuracy.late == 0);
  // Told the wait for one unit (the first admission's exit), the request of 5 comes back early.
  records[2].retry_ms = 8000;
  CHECK(audited(records, weighted(part)).retry_accuracy.early == 1);
}

TEST_CASE("costs: a request costing more than the contract holds can never pass") {
  const auto part = sliding(10, 10'000, "sliding:10/10s");
  // Admitted: over the limit on its own.
  const std::vector<RequestRecord> admitted = {costing(request(0, 0, Outcome::allowed), 11)};
  CHECK(audited(admitted, weighted(part)).peak.exceeded());
  // Denied with a hint: a promise no wait keeps.
  const std::vector<RequestRecord> promised = {
      costing(request(0, 0, Outcome::denied, 0, 1000), 11)};
  const RunStats stats = audited(promised, weighted(part));
  CHECK(stats.retry_accuracy.never_admissible == 1);
  CHECK(stats.retry_accuracy.errors.empty());
}

TEST_CASE("costs: a requests: part counts requests beside a part counting units") {
  // 3 requests per 10 s and 20 units per 10 s: requests of 5, 5 and 5 units fill the first
  // part (3 requests) with room left in the second (15 units).
  auto requests = sliding(3, 10'000, "requests:sliding:3/10s");
  requests.counts_requests = true;
  auto audit = audit_of({requests, sliding(20, 10'000, "sliding:20/10s")});
  audit.weighted = true;
  std::vector<RequestRecord> records = {
      costing(request(0, 0, Outcome::allowed), 5), costing(request(1, 100, Outcome::allowed), 5),
      costing(request(2, 200, Outcome::allowed), 5), costing(request(3, 300, Outcome::denied), 1)};
  const RunStats held = audited(records, audit);
  CHECK(held.parts[0].contract.worst.count == 3);
  CHECK(held.parts[1].contract.worst.count == 15);
  CHECK_FALSE(held.peak.exceeded());
  CHECK(held.lockouts.count == 0);  // the requests part was full
  // A fourth admission breaks the requests part, not the units one.
  records[3].outcome = Outcome::allowed;
  const RunStats over = audited(records, audit);
  CHECK(over.parts[0].contract.worst.exceeded());
  CHECK_FALSE(over.parts[1].contract.worst.exceeded());
}

TEST_CASE("costs: the units a response says are left are judged against the admissions seen") {
  // 40 units per 2 s: admissions of 30 and 10 at 0 and 500 ms leave 10 and then 0.
  const auto part = sliding(40, 2000, "sliding:40/2s");
  std::vector<RequestRecord> records = {costing(request(0, 0, Outcome::allowed), 30),
                                        costing(request(1, 500, Outcome::allowed), 10)};
  records[0].remaining_units = 10;
  records[1].remaining_units = 0;
  const RunStats right = audited(records, weighted(part));
  CHECK(right.remaining_units.judged == 2);
  CHECK(right.remaining_units.wrong == 0);
  // A count of requests left (40 - 2 = 38) promises units already given away.
  records[1].remaining_units = 38;
  const RunStats wrong = audited(records, weighted(part));
  CHECK(wrong.remaining_units.wrong == 1);
  REQUIRE(wrong.remaining_units.first);
  CHECK(wrong.remaining_units.first->said == 38);
  CHECK(wrong.remaining_units.first->high == 0);
  // Once the first admission has left the window (at 2001 ms), 30 more are left.
  records.push_back(costing(request(2, 2100, Outcome::allowed), 5));
  records[1].remaining_units = 0;
  records[2].remaining_units = 25;
  CHECK(audited(records, weighted(part)).remaining_units.wrong == 0);
}
