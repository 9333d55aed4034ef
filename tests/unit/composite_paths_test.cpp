// The audit of several parts (and of costs) judges denials two ways: every part over the whole
// run first, combined after (the general path), or every part of one denial at once in one
// pass (the fast path, where parts key by identity and count no denials). Random record sets
// (admissions, denials, errors that may have been admitted, hints, costs, windows limiters
// named) must get the same lock-outs, hint errors and utilisation from both.

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "checks/composite_audit.hpp"
#include "checks/run_stats.hpp"
#include "engine/record_log.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::AuditParams;
using rlcheck::checks::CompositePath;
using rlcheck::checks::ContractPart;
using rlcheck::checks::RunStats;
using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RecordLog;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

int64_t pick(std::mt19937& rng, int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(rng);
}

// A run of `count` requests of `identities`, sent about `gap_ms` apart (not always in seq
// order), a third admitted, some errors (timeouts may have been admitted, refusals not),
// denials with hints mostly; costs 1..4 when `weighted`, now and then more than a part holds.
std::vector<RequestRecord> random_run(std::mt19937& rng, int count, int identities, bool weighted) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < count; ++i) {
    RequestRecord r;
    r.seq = static_cast<uint64_t>(i);
    r.identity = static_cast<uint32_t>(pick(rng, 0, identities - 1));
    r.sent_ns = 1'000 * k_ms + i * 20 * k_ms + pick(rng, -30, 30) * k_ms;
    r.replied_ns = r.sent_ns + pick(rng, 0, 40) * k_ms + pick(rng, 0, 999'999);
    const int64_t roll = pick(rng, 0, 99);
    r.outcome = roll < 35 ? Outcome::allowed : roll < 90 ? Outcome::denied : Outcome::error;
    if (r.outcome == Outcome::error)
      r.error = pick(rng, 0, 1) == 0 ? ErrorKind::timeout : ErrorKind::refused;
    if (r.outcome == Outcome::denied && pick(rng, 0, 9) < 8) {
      r.retry_ms = pick(rng, 0, 2000);
      r.hint_resolution_ms = pick(rng, 0, 1) == 0 ? 1 : 1000;
    }
    r.hint_expected = r.outcome == Outcome::denied;
    if (weighted)
      r.cost = static_cast<int32_t>(pick(rng, 0, 19) == 0 ? 9 : pick(rng, 1, 4));
    if (pick(rng, 0, 9) == 0)
      r.bucket = pick(rng, 1, 5);  // a window the limiter named: every part places its own
    records.push_back(r);
  }
  return records;
}

ContractPart random_part(std::mt19937& rng, AdmissionRule::Kind kind) {
  ContractPart part;
  part.spec = "part-" + std::to_string(pick(rng, 0, 1'000'000));
  part.rule.kind = kind;
  part.rule.clock_ns = pick(rng, 0, 2) * k_ms;
  part.rule.window_ns = pick(rng, 100, 1000) * k_ms;
  part.rule.limit = pick(rng, 2, 8);
  if (kind == AdmissionRule::Kind::bucket) {
    part.rule.burst = pick(rng, 2, 8);
    part.rule.tokens_per_ns = static_cast<double>(pick(rng, 2, 20)) / 1e9;
  }
  part.name = kind == AdmissionRule::Kind::bucket ? "token-bucket" : "sliding";
  return part;
}

RunStats audited(const std::vector<RequestRecord>& records, const AuditParams& audit,
                 CompositePath path) {
  RunStats stats;
  RecordLog log(records);
  rlcheck::checks::audit_composite(stats, log, 5'000 * k_ms, audit, path);
  return stats;
}

void check_same(const RunStats& fast, const RunStats& general) {
  CHECK(fast.lockouts.judged == general.lockouts.judged);
  CHECK(fast.lockouts.count == general.lockouts.count);
  REQUIRE(fast.lockouts.worst.has_value() == general.lockouts.worst.has_value());
  if (fast.lockouts.worst) {
    CHECK(fast.lockouts.worst->seq == general.lockouts.worst->seq);
    CHECK(fast.lockouts.worst->used == general.lockouts.worst->used);
    CHECK(fast.lockouts.worst->capacity == general.lockouts.worst->capacity);
    CHECK(fast.lockouts.worst->part == general.lockouts.worst->part);
  }
  CHECK(fast.lockouts.denial_counting.has_value() == general.lockouts.denial_counting.has_value());
  const auto& a = fast.retry_accuracy;
  const auto& b = general.retry_accuracy;
  CHECK(a.early == b.early);
  CHECK(a.late == b.late);
  CHECK(a.unexplained == b.unexplained);
  CHECK(a.never_admissible == b.never_admissible);
  CHECK(a.never_worst.has_value() == b.never_worst.has_value());
  if (a.never_worst && b.never_worst)
    CHECK(a.never_worst->seq == b.never_worst->seq);
  CHECK(a.errors.counts() == b.errors.counts());
  REQUIRE(a.errors.worst().has_value() == b.errors.worst().has_value());
  if (a.errors.worst())
    CHECK(a.errors.worst()->seq == b.errors.worst()->seq);
  CHECK(a.resolutions == b.resolutions);
  CHECK(a.instants_off_second_grid == b.instants_off_second_grid);
  CHECK(fast.utilisation.admitted == general.utilisation.admitted);
  CHECK(fast.utilisation.allowed == general.utilisation.allowed);
  CHECK(fast.utilisation.identity == general.utilisation.identity);
}

AuditParams audit_of(std::mt19937& rng, std::vector<ContractPart> parts, int identities,
                     bool weighted) {
  AuditParams audit;
  audit.rule = parts.front().rule;
  audit.parts = std::move(parts);
  audit.identities = identities;
  audit.fresh_state = pick(rng, 0, 1) == 0;
  audit.weighted = weighted;
  audit.tolerance.window_ms = 1000;
  return audit;
}

}  // namespace

TEST_CASE("several parts: one pass over the denials judges them as the parts one by one do") {
  std::mt19937 rng(20261206);
  const AdmissionRule::Kind kinds[] = {AdmissionRule::Kind::sliding, AdmissionRule::Kind::bucket};
  for (int round = 0; round < 60; ++round) {
    CAPTURE(round);
    const int identities = static_cast<int>(pick(rng, 1, 4));
    const std::vector<RequestRecord> records = random_run(rng, 300, identities, false);
    std::vector<ContractPart> parts;
    const int count = round % 2 == 0 ? 2 : 3;
    for (int p = 0; p < count; ++p)
      parts.push_back(random_part(rng, kinds[pick(rng, 0, 1)]));
    const AuditParams audit = audit_of(rng, parts, identities, false);
    check_same(audited(records, audit, CompositePath::fastest),
               audited(records, audit, CompositePath::general));
  }
}

TEST_CASE("costs: one pass over the denials judges them as the general path does") {
  std::mt19937 rng(6122026);
  const AdmissionRule::Kind kinds[] = {AdmissionRule::Kind::sliding, AdmissionRule::Kind::bucket,
                                       AdmissionRule::Kind::fixed};
  for (int round = 0; round < 60; ++round) {
    CAPTURE(round);
    const int identities = static_cast<int>(pick(rng, 1, 4));
    const std::vector<RequestRecord> records = random_run(rng, 300, identities, true);
    std::vector<ContractPart> parts = {random_part(rng, kinds[round % 3])};
    // Now and then a part counting requests beside the one counting units.
    if (round % 4 == 3) {
      parts.push_back(random_part(rng, AdmissionRule::Kind::sliding));
      parts.back().counts_requests = true;
    }
    const AuditParams audit = audit_of(rng, parts, identities, true);
    check_same(audited(records, audit, CompositePath::fastest),
               audited(records, audit, CompositePath::general));
  }
}
