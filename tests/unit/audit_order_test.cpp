// The audits of a run never depend on the order its records come in: every tie is broken by
// an explicit key, so a run audited in send order (per identity) gives what one audited in seq
// order does.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"
#include "checks/queue_audit.hpp"
#include "checks/retry_accuracy.hpp"
#include "checks/run_stats.hpp"

using rlcheck::checks::AdmissionPeak;
using rlcheck::checks::AdmissionRule;
using rlcheck::checks::AuditParams;
using rlcheck::checks::FaultWindow;
using rlcheck::checks::HintError;
using rlcheck::checks::HintErrors;
using rlcheck::checks::RunStats;
using rlcheck::checks::summarize_run;
using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::engine::RunResult;

namespace {

constexpr int64_t k_ms = 1'000'000;
constexpr int64_t k_window_ms = 100;
// 30 ms before a window boundary on the wall clock, so fixed windows have straddlers.
constexpr int64_t k_start_wall_ns = 1'000 * k_window_ms * k_ms - 30 * k_ms;

RequestRecord request(uint64_t seq, uint32_t identity, int64_t sent_ns, int64_t replied_ns,
                      Outcome outcome) {
  RequestRecord r;
  r.seq = seq;
  r.identity = identity;
  r.sent_ns = sent_ns;
  r.replied_ns = replied_ns;
  r.outcome = outcome;
  return r;
}

// Records whose instants fall on a coarse grid, so sends, replies, waits, counts and hint
// errors tie often, within one identity and across them.
std::vector<RequestRecord> tied_records(uint64_t seed, uint32_t identities, bool named_windows) {
  std::mt19937_64 random(seed);
  const auto pick = [&](uint64_t n) { return static_cast<int64_t>(random() % n); };
  std::vector<RequestRecord> records;
  const int count = 30 + static_cast<int>(pick(40));
  for (int i = 0; i < count; ++i) {
    const auto seq = static_cast<uint64_t>(i);
    const auto identity = static_cast<uint32_t>(pick(identities));
    const int64_t sent = pick(30) * 10 * k_ms;
    const int64_t replied = sent + pick(4) * 5 * k_ms;
    const int64_t roll = pick(10);
    const Outcome outcome = roll < 6   ? Outcome::allowed
                            : roll < 9 ? Outcome::denied
                                       : Outcome::error;
    RequestRecord record = request(seq, identity, sent, replied, outcome);
    if (outcome == Outcome::denied) {
      record.hint_expected = true;
      if (pick(5) != 0)
        record.retry_ms = pick(6) * 20;
    }
    if (outcome == Outcome::error)
      record.error = pick(2) == 0 ? ErrorKind::timeout : ErrorKind::connection;
    if (named_windows && outcome != Outcome::error)
      record.bucket = rlcheck::checks::wall_window(k_start_wall_ns, sent, k_window_ms * k_ms);
    record.clock_skew = static_cast<uint8_t>(pick(2));
    records.push_back(record);
  }
  return records;
}

AuditParams params_of(AdmissionRule::Kind kind) {
  AuditParams audit;
  audit.rule.kind = kind;
  audit.rule.limit = 3;
  audit.rule.window_ns = k_window_ms * k_ms;
  audit.rule.burst = 3;
  audit.rule.tokens_per_ns = 3.0 / static_cast<double>(k_window_ms * k_ms);
  audit.rule.clock_ns = k_ms;
  audit.identities = 3;
  audit.max_retry_after_ms = 80;
  audit.tolerance.window_ms = k_window_ms;
  audit.timeline = true;
  audit.clock_skews = 2;
  return audit;
}

// Every audit, and each contract's variants, that the tie rules touch.
std::vector<std::pair<std::string, AuditParams>> audit_variants() {
  std::vector<std::pair<std::string, AuditParams>> variants;
  using Kind = AdmissionRule::Kind;
  variants.emplace_back("sliding", params_of(Kind::sliding));
  variants.emplace_back("fixed", params_of(Kind::fixed));
  AuditParams own_clock = params_of(Kind::fixed);
  own_clock.own_clock_windows = true;
  variants.emplace_back("fixed, own clock", own_clock);
  AuditParams fresh_first_hit = params_of(Kind::first_hit);
  fresh_first_hit.fresh_state = true;
  variants.emplace_back("first-hit, fresh", fresh_first_hit);
  AuditParams first_hit = params_of(Kind::first_hit);
  first_hit.rule.fresh_state = false;
  variants.emplace_back("first-hit", first_hit);
  variants.emplace_back("bucket", params_of(Kind::bucket));
  variants.emplace_back("sliding-counter", params_of(Kind::sliding_counter));
  AuditParams anchored = params_of(Kind::sliding_counter);
  anchored.rule.first_hit_anchor = true;
  anchored.fresh_state = true;
  variants.emplace_back("sliding-counter, first hit", anchored);
  AuditParams queue = params_of(Kind::bucket);
  queue.queue_depth = 2;
  variants.emplace_back("queue", queue);
  return variants;
}

std::vector<FaultWindow> faults() {
  FaultWindow fault;
  fault.spec = "pause@50ms+60ms";
  fault.at_ns = 50 * k_ms;
  fault.until_ns = 110 * k_ms;
  fault.held_from_ns = 60 * k_ms;
  fault.applied = true;
  return {fault};
}

void put(std::ostringstream& out, const char* name, const AdmissionPeak& peak) {
  out << name << ' ' << peak.count << ' ' << peak.allowance << ' ' << peak.start_ns << ' '
      << peak.length_ns << '\n';
}

template <typename T>
void put(std::ostringstream& out, const char* name, const std::optional<T>& value) {
  out << name << ' ';
  if (value)
    out << *value;
  else
    out << '-';
  out << '\n';
}

template <typename T>
void put(std::ostringstream& out, const char* name, const std::vector<T>& values) {
  out << name;
  for (const auto& value : values)
    out << ' ' << +value;
  out << '\n';
}

// Every figure the audits put in a run's stats, exactly (instants in ns), the real-clock
// duration apart.
std::string describe(const RunStats& run) {
  std::ostringstream out;
  out.precision(17);
  out << "counts " << run.requests << ' ' << run.allowed << ' ' << run.denied << ' ' << run.errors
      << ' ' << run.unknown << '\n';
  out << "hints " << run.retry.present << ' ' << run.retry.missing << ' ' << run.retry.invalid
      << ' ' << run.retry.over_bound << '\n';
  put(out, "hint min", run.retry.min_ms);
  put(out, "hint max", run.retry.max_ms);
  put(out, "peak", run.peak);
  put(out, "worst", run.contract.worst);
  out << "worst identity " << run.contract.worst_identity << '\n';
  put(out, "boundary burst", run.contract.boundary_burst);
  put(out, "sliding window", run.contract.sliding_window);
  put(out, "worst by skew", run.contract.worst_by_skew);
  const auto& share = run.utilisation;
  out << "utilisation " << share.identity << ' ' << share.admitted << ' ' << share.unknown << ' '
      << share.allowed << '\n';
  out << "span " << run.send_span_ns << " memory " << run.memory_ns << '\n';
  out << "lockouts " << run.lockouts.judged << ' ' << run.lockouts.count << '\n';
  if (const auto& worst = run.lockouts.worst) {
    out << "lockout worst " << worst->identity << ' ' << worst->seq << ' ' << worst->sent_ns << ' '
        << worst->used << ' ' << worst->capacity << '\n';
  }
  if (const auto& counting = run.lockouts.denial_counting) {
    out << "denial counting " << counting->identity << ' ' << counting->last_admitted_ns << ' '
        << counting->denials << ' ' << counting->offered_per_s << '\n';
  }
  const auto& accuracy = run.retry_accuracy;
  out << "accuracy " << accuracy.errors.size() << ' ' << accuracy.early << ' ' << accuracy.late
      << ' ' << accuracy.unexplained << ' ' << accuracy.finer_hints_whole_seconds << '\n';
  for (const auto& [error_ms, count] : accuracy.errors.counts())
    out << "error " << error_ms << " x" << count << '\n';
  if (const auto& worst = accuracy.errors.worst()) {
    out << "hint worst " << worst->identity << ' ' << worst->seq << ' ' << worst->sent_ns << ' '
        << worst->denied_at_ns << ' ' << worst->hint_ms << ' ' << worst->error_ms << ' '
        << worst->resolution_ms << '\n';
  }
  put(out, "resolutions", accuracy.resolutions);
  if (const auto& queue = run.queue) {
    put(out, "departures", queue->departures);
    out << "departures identity " << queue->departures_identity << " unloaded "
        << queue->unloaded_ns << '\n';
    if (queue->longest) {
      out << "longest wait " << queue->longest->identity << ' ' << queue->longest->seq << ' '
          << queue->longest->sent_ns << ' ' << queue->longest->wait_ns << '\n';
    }
  }
  for (const FaultWindow& fault : run.faults) {
    out << "fault " << fault.during_allowed << ' ' << fault.during_denied << ' '
        << fault.during_errors << ' ' << fault.allowed_while_faulted << ' '
        << fault.refused_while_faulted << ' ' << fault.sent_after << ' ' << fault.errors_after
        << '\n';
    put(out, "recovered after", fault.recovered_after_ns);
    put(out, "last error after", fault.last_error_after_ns);
    if (fault.first_allowed_while_faulted)
      out << "first allowed " << fault.first_allowed_while_faulted->seq << '\n';
    if (fault.first_refused_while_faulted)
      out << "first refused " << fault.first_refused_while_faulted->seq << '\n';
  }
  if (run.timeline) {
    out << "timeline " << run.timeline->bin_ns << '\n';
    for (const auto& series : run.timeline->series) {
      out << "series " << series.identity << '\n';
      put(out, " allowed", series.allowed);
      put(out, " denied", series.denied);
      put(out, " errors", series.errors);
      put(out, " in window", series.in_window);
    }
  }
  return out.str();
}

RunStats audit(const std::vector<RequestRecord>& records, const AuditParams& params) {
  RunResult result;
  result.records = rlcheck::engine::RecordLog(records);
  result.start_wall_ns = k_start_wall_ns;
  result.duration_ns = 400 * k_ms;
  return summarize_run(1, result, params, faults());
}

// The records of `seed`, audited in seq order, then in other orders: each the same.
void check_order_free(uint64_t seed, bool named_windows) {
  const std::vector<RequestRecord> records = tied_records(seed, 3, named_windows);
  for (const auto& [name, params] : audit_variants()) {
    const std::string expected = describe(audit(records, params));
    std::vector<RequestRecord> shuffled = records;
    // By send (what a stream delivers), its reverse, and shuffled.
    std::stable_sort(
        shuffled.begin(), shuffled.end(),
        [](const RequestRecord& a, const RequestRecord& b) { return a.sent_ns < b.sent_ns; });
    for (int order = 0; order < 6; ++order) {
      if (order == 1)
        std::reverse(shuffled.begin(), shuffled.end());
      if (order >= 2) {
        std::mt19937_64 random(seed * 31 + static_cast<uint64_t>(order));
        std::shuffle(shuffled.begin(), shuffled.end(), random);
      }
      INFO("seed ", seed, ", ", name, std::string(named_windows ? ", named windows" : ""),
           ", order ", order);
      CHECK(describe(audit(shuffled, params)) == expected);
    }
  }
}

}  // namespace

TEST_CASE("audits of tied records are the same in any order of the records") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    check_order_free(seed, false);
    check_order_free(seed, true);
  }
}

TEST_CASE("a straddling admission's lone window is numbered by its seq, not by position") {
  AdmissionRule fixed;
  fixed.kind = AdmissionRule::Kind::fixed;
  fixed.limit = 2;
  fixed.window_ns = k_window_ms * k_ms;
  fixed.clock_ns = k_ms;
  // Both straddle the boundary 30 ms into the run.
  std::vector<RequestRecord> records = {
      request(7, 0, 29 * k_ms, 31 * k_ms, Outcome::allowed),
      request(3, 1, 25 * k_ms, 35 * k_ms, Outcome::allowed),
      request(5, 0, 10 * k_ms, 12 * k_ms, Outcome::allowed),
  };
  rlcheck::checks::assign_wall_windows(records, k_start_wall_ns, fixed);
  CHECK(records[0].bucket == -8);
  CHECK(records[1].bucket == -4);
  CHECK(records[2].bucket == 999);
}

TEST_CASE("fixed windows equal in count: the one whose first admission was sent first") {
  AuditParams params = params_of(AdmissionRule::Kind::fixed);
  params.identities = 1;
  // One admission in window 1000 (sent 40 ms in), one straddling the boundary at 30 ms (its
  // own window, numbered below every wall window), one in window 999 sent at 20 ms: the peak
  // is window 999's, though the lone window comes first by index.
  const std::vector<RequestRecord> records = {
      request(0, 0, 40 * k_ms, 41 * k_ms, Outcome::allowed),
      request(1, 0, 28 * k_ms, 31 * k_ms, Outcome::allowed),
      request(2, 0, 20 * k_ms, 22 * k_ms, Outcome::allowed),
  };
  const RunStats stats = audit(records, params);
  CHECK(stats.peak.count == 1);
  CHECK(stats.peak.start_ns == 20 * k_ms);
  CHECK(stats.peak.length_ns == 2 * k_ms);
}

TEST_CASE("the worst hint error: the largest either way, then identity, send and seq") {
  const auto error = [](uint32_t identity, uint64_t seq, int64_t sent_ms, int64_t error_ms) {
    HintError e;
    e.identity = identity;
    e.seq = seq;
    e.sent_ns = sent_ms * k_ms;
    e.error_ms = error_ms;
    return e;
  };
  const HintErrors by_seq = {error(1, 0, 0, 500), error(0, 9, 30, -500), error(0, 4, 30, 500),
                             error(0, 2, 50, 500)};
  REQUIRE(by_seq.worst());
  CHECK(by_seq.worst()->identity == 0);
  CHECK(by_seq.worst()->seq == 4);
  const HintErrors by_send = {error(0, 2, 50, -500), error(0, 9, 10, 500), error(0, 1, 60, 400)};
  REQUIRE(by_send.worst());
  CHECK(by_send.worst()->seq == 9);
}

TEST_CASE("hint errors copied or moved count on their own") {
  HintError zero;
  HintError late;
  late.error_ms = 7;
  HintErrors original = {zero, zero};
  HintErrors copy = original;
  copy.push_back(zero);
  original.push_back(late);
  CHECK(copy.counts() == std::map<int64_t, int64_t>{{0, 3}});
  CHECK(original.counts() == std::map<int64_t, int64_t>{{0, 2}, {7, 1}});
  HintErrors moved = std::move(copy);
  moved.push_back(zero);
  copy = original;
  copy.push_back(zero);
  CHECK(moved.counts() == std::map<int64_t, int64_t>{{0, 4}});
  CHECK(copy.counts() == std::map<int64_t, int64_t>{{0, 3}, {7, 1}});
  CHECK(original.counts() == std::map<int64_t, int64_t>{{0, 2}, {7, 1}});
  CHECK(moved.size() == 4);
}

TEST_CASE("lock-outs and queue waits equal in every figure: the lowest seq") {
  AdmissionRule sliding;
  sliding.limit = 2;
  sliding.window_ns = k_window_ms * k_ms;
  // Two denials sent together with the window empty, listed highest seq first.
  std::vector<RequestRecord> records = {
      request(6, 0, 10 * k_ms, 11 * k_ms, Outcome::denied),
      request(4, 0, 10 * k_ms, 11 * k_ms, Outcome::denied),
  };
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  const auto lockouts = rlcheck::checks::find_lockouts(identities, sliding, 0, 0);
  CHECK(lockouts.count == 2);
  REQUIRE(lockouts.worst);
  CHECK(lockouts.worst->seq == 4);

  AdmissionRule arrivals;
  arrivals.kind = AdmissionRule::Kind::bucket;
  arrivals.burst = 3;
  arrivals.tokens_per_ns = 10.0 / 1e9;
  std::vector<RequestRecord> waits = {
      request(8, 0, 0, 40 * k_ms, Outcome::allowed),
      request(5, 0, 10 * k_ms, 50 * k_ms, Outcome::allowed),
      request(2, 0, 20 * k_ms, 30 * k_ms, Outcome::allowed),
  };
  const auto queue =
      rlcheck::checks::audit_queue(rlcheck::checks::split_by_identity(waits, 1), arrivals, 2);
  REQUIRE(queue.longest);
  CHECK(queue.longest->seq == 5);
  CHECK(queue.longest->wait_ns == 40 * k_ms);
}

TEST_CASE("identities tied on every audit: the lowest is named") {
  AuditParams params = params_of(AdmissionRule::Kind::sliding);
  params.identities = 2;
  params.fresh_state = true;
  // Identities 0 and 1 send the same: four admissions at once (one over), then denials whose
  // hints are equally wrong, then denials long after the window emptied (locked out).
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  for (int i = 0; i < 4; ++i) {
    for (uint32_t identity : {1U, 0U})
      records.push_back(request(seq++, identity, 0, k_ms, Outcome::allowed));
  }
  for (int i = 0; i < 10; ++i) {
    for (uint32_t identity : {1U, 0U}) {
      RequestRecord denial =
          request(seq++, identity, (10 + 30 * i) * k_ms, (11 + 30 * i) * k_ms, Outcome::denied);
      denial.retry_ms = 500;
      records.push_back(denial);
    }
  }
  const RunStats stats = audit(records, params);
  CHECK(stats.contract.worst.count == 4);
  CHECK(stats.contract.worst_identity == 0);
  CHECK(stats.utilisation.identity == 0);
  REQUIRE(stats.lockouts.worst);
  CHECK(stats.lockouts.worst->identity == 0);
  REQUIRE(stats.lockouts.denial_counting);
  CHECK(stats.lockouts.denial_counting->identity == 0);
  REQUIRE(stats.retry_accuracy.errors.worst());
  CHECK(stats.retry_accuracy.errors.worst()->identity == 0);
}
