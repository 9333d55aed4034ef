#include "checks/concurrency_audit.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"

using rlcheck::checks::audit_concurrency;
using rlcheck::checks::ConcurrencyAudit;
using rlcheck::checks::ConcurrencyRule;
using rlcheck::checks::IdentityRecords;
using rlcheck::checks::k_release_slack_ns;
using rlcheck::checks::LockOuts;
using rlcheck::checks::measured_hold_ns;
using rlcheck::checks::most_surely_in_progress;
using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

// One identity's records, each {sent ms, replied ms, outcome}; seqs in order.
struct Sent {
  int64_t sent_ms = 0;
  int64_t replied_ms = 0;
  Outcome outcome = Outcome::allowed;
};

std::vector<RequestRecord> made(const std::vector<Sent>& requests, uint32_t identity = 0) {
  std::vector<RequestRecord> records;
  for (const Sent& sent : requests) {
    RequestRecord record;
    record.seq = records.size();
    record.identity = identity;
    record.sent_ns = sent.sent_ms * k_ms;
    record.replied_ns = sent.replied_ms * k_ms;
    record.outcome = sent.outcome;
    if (sent.outcome == Outcome::error)
      record.error = ErrorKind::timeout;  // may have reached the limiter
    records.push_back(record);
  }
  return records;
}

ConcurrencyRule cap_of(int64_t cap, int64_t hold_ms) {
  ConcurrencyRule rule;
  rule.cap = cap;
  rule.hold_ns = hold_ms * k_ms;
  return rule;
}

ConcurrencyAudit audited(const std::vector<RequestRecord>& records, const ConcurrencyRule& rule,
                         LockOuts& lockouts) {
  const IdentityRecords identities{records};
  return audit_concurrency(identities, rule, lockouts);
}

}  // namespace

TEST_CASE("admissions whose sure spans share an instant prove the cap broken") {
  const auto records = made({{0, 300}, {0, 300}, {0, 300}});
  LockOuts lockouts;
  const ConcurrencyAudit audit = audited(records, cap_of(2, 300), lockouts);
  CHECK(audit.surely_at_once == 3);
  CHECK(audit.exceeded());
  CHECK(audit.surely_at_ns == 0);
  CHECK(audit.surely_seqs == std::vector<uint64_t>{0, 1, 2});
  CHECK(audit.possibly_at_once == 3);
  CHECK_FALSE(audited(records, cap_of(3, 300), lockouts).exceeded());
}

TEST_CASE("sure spans that only touch do not overlap; one nanosecond more does") {
  // Held 300 ms from a send at 0 and a reply at 300: surely in progress over [0, 300).
  const auto touching = made({{0, 300}, {300, 600}});
  CHECK(most_surely_in_progress(touching, 300 * k_ms).count == 1);
  auto overlapping = touching;
  overlapping[1].sent_ns -= 1;
  overlapping[1].replied_ns -= 1;
  const auto sure = most_surely_in_progress(overlapping, 300 * k_ms);
  CHECK(sure.count == 2);
  CHECK(sure.at_ns == 300 * k_ms - 1);
}

TEST_CASE("an admission that took twice the hold may have been anywhere in it") {
  // Sent at 0, replied at 600 with a 300 ms hold: it may have held [0, 300) or [300, 600).
  CHECK(most_surely_in_progress(made({{0, 600}, {0, 600}}), 300 * k_ms).count == 0);
  // A millisecond less, and [299, 300) is surely its.
  const auto sure = most_surely_in_progress(made({{0, 599}, {0, 599}}), 300 * k_ms);
  CHECK(sure.count == 2);
  CHECK(sure.at_ns == 299 * k_ms);
}

TEST_CASE("without a floor nothing is proven, however many overlapped") {
  const auto records = made({{0, 300}, {0, 300}, {0, 300}, {0, 300}});
  CHECK(most_surely_in_progress(records, 0).count == 0);
  // No denials: the fastest admission is the unloaded latency, and the floor is 0.
  CHECK(measured_hold_ns(IdentityRecords{records}) == 0);
  ConcurrencyRule measured;
  measured.cap = 1;
  LockOuts lockouts;
  const ConcurrencyAudit audit = audited(records, measured, lockouts);
  CHECK(audit.hold_measured);
  CHECK(audit.hold_ns == 0);
  CHECK_FALSE(audit.exceeded());
  CHECK(audit.possibly_at_once == 4);
}

TEST_CASE("the measured floor is the fastest admission less a denial's latency, less a tenth") {
  const auto records = made({{0, 310},
                             {10, 15, Outcome::denied},
                             {20, 320},
                             {30, 33, Outcome::denied},
                             {40, 400, Outcome::error}});
  // 300 (the fastest admission) - 5 (the slower denial: the 99th percentile of two) = 295,
  // less a tenth.
  CHECK(measured_hold_ns(IdentityRecords{records}) == 295 * k_ms - 295 * k_ms / 10);
}

TEST_CASE("identities are capped apart") {
  const auto first = made({{0, 300}, {0, 300}}, 0);
  const auto second = made({{0, 300}, {0, 300}}, 1);
  const IdentityRecords identities{first, second};
  LockOuts lockouts;
  const ConcurrencyAudit audit = audit_concurrency(identities, cap_of(2, 300), lockouts);
  CHECK(audit.surely_at_once == 2);
  CHECK_FALSE(audit.exceeded());
}

TEST_CASE("a denial is a lock-out only when fewer than the cap could be in progress") {
  // Two admissions in progress over [0, 300]; a limiter may release 50 ms after a reply.
  const int64_t slack_ms = k_release_slack_ns / k_ms;
  const auto records = made({{0, 300},
                             {0, 300},
                             {100, 105, Outcome::denied},                              // full: fair
                             {300 + slack_ms, 400, Outcome::denied},                   // edge: fair
                             {300 + slack_ms + 1, 400 + slack_ms, Outcome::denied}});  // room
  LockOuts lockouts;
  audited(records, cap_of(2, 300), lockouts);
  CHECK(lockouts.judged == 3);
  CHECK(lockouts.count == 1);
  REQUIRE(lockouts.worst);
  CHECK(lockouts.worst->seq == 4);
  CHECK(lockouts.worst->used == 0);
  CHECK(lockouts.worst->capacity == 2);
}

TEST_CASE("a denial sent before an admission but answered after it counts that admission") {
  // The admission may have arrived first: the denial had no room under that reading.
  const auto records = made({{0, 300}, {50, 120, Outcome::denied}, {100, 400}});
  LockOuts lockouts;
  audited(records, cap_of(2, 300), lockouts);
  CHECK(lockouts.judged == 1);
  CHECK(lockouts.count == 0);
}

TEST_CASE("a request that may have reached the limiter unseen holds its place for ever") {
  const auto records = made({{0, 300}, {0, 5000, Outcome::error}, {2000, 2005, Outcome::denied}});
  LockOuts lockouts;
  audited(records, cap_of(1, 300), lockouts);
  CHECK(lockouts.count == 0);
  LockOuts two;
  audited(records, cap_of(2, 300), two);
  CHECK(two.count == 1);
  REQUIRE(two.worst);
  CHECK(two.worst->used == 1);
}
