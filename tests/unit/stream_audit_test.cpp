// --audit stream gives the figures the batch audit gives: fixed record sets are replayed through
// summarize_run (the batch audit, the oracle) and through the Sequencer and StreamAudit, and
// every figure both produce must match exactly.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "checks/run_stats.hpp"
#include "checks/stream_audit.hpp"
#include "engine/record_stream.hpp"

using rlcheck::checks::AdmissionPeak;
using rlcheck::checks::AdmissionRule;
using rlcheck::checks::AuditParams;
using rlcheck::checks::RunStats;
using rlcheck::checks::StreamAudit;
using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RecordConsumer;
using rlcheck::engine::RequestRecord;
using rlcheck::engine::RunResult;
using rlcheck::engine::Schedule;
using rlcheck::engine::Sequencer;

namespace {

constexpr int64_t k_ms = 1'000'000;
constexpr int64_t k_window_ms = 100;
constexpr int64_t k_start_wall_ns = 1'000 * k_window_ms * k_ms - 30 * k_ms;

// A run's records as a limiter under load leaves them: bursts that break the limit and quiet
// stretches, sends on a grid coarse enough to tie, replies that overtake each other.
std::vector<RequestRecord> records_of(uint64_t seed, uint32_t identities, int count,
                                      int64_t grid_ns, bool named_windows) {
  std::mt19937_64 random(seed);
  const auto pick = [&](uint64_t n) { return static_cast<int64_t>(random() % n); };
  std::vector<RequestRecord> records;
  int64_t clock = 0;
  for (int i = 0; i < count; ++i) {
    RequestRecord record;
    record.seq = static_cast<uint64_t>(i);
    record.identity = static_cast<uint32_t>(pick(identities));
    clock += pick(8) == 0 ? pick(60) * k_ms : pick(3) * grid_ns;
    record.sent_ns = clock;
    // A reply always comes after its send (as on any real clock), often at the same instant as
    // another's.
    record.replied_ns = clock + 1 + pick(12) * grid_ns / 2;
    const int64_t roll = pick(20);
    record.outcome = roll < 11 ? Outcome::allowed : roll < 18 ? Outcome::denied : Outcome::error;
    if (record.outcome == Outcome::denied) {
      record.hint_expected = pick(4) != 0;
      if (pick(5) != 0)
        record.retry_ms = pick(7) * 20 - 10;
      record.hint_invalid = pick(30) == 0;
    }
    if (record.outcome == Outcome::error) {
      const int64_t kind = pick(3);
      record.error = kind == 0   ? ErrorKind::timeout
                     : kind == 1 ? ErrorKind::connection
                                 : ErrorKind::status;
      record.status = record.error == ErrorKind::status ? 503 : 0;
    }
    // Identity 0 locked out for the last third: every request of its denied.
    if (record.identity == 0 && i > 2 * count / 3) {
      record.outcome = Outcome::denied;
      record.error = ErrorKind::none;
      record.status = 0;
    }
    if (named_windows && record.outcome != Outcome::error)
      record.bucket = rlcheck::checks::wall_window(k_start_wall_ns, clock, k_window_ms * k_ms);
    records.push_back(record);
  }
  return records;
}

AuditParams params_of(AdmissionRule::Kind kind, int64_t identities) {
  AuditParams audit;
  audit.rule.kind = kind;
  audit.rule.limit = 4;
  audit.rule.window_ns = k_window_ms * k_ms;
  audit.rule.burst = 4;
  audit.rule.tokens_per_ns = 4.0 / static_cast<double>(k_window_ms * k_ms);
  audit.rule.clock_ns = k_ms;
  audit.identities = identities;
  audit.max_retry_after_ms = 90;
  audit.tolerance.window_ms = k_window_ms;
  return audit;
}

void put(std::ostringstream& out, const char* name, const AdmissionPeak& peak) {
  out << name << ' ' << peak.count << ' ' << peak.allowance << ' ' << peak.start_ns << ' '
      << peak.length_ns << '\n';
}

// Every figure the streamed audit produces, as text, so a mismatch shows which.
std::string figures(const RunStats& stats) {
  std::ostringstream out;
  out << "requests " << stats.requests << " allowed " << stats.allowed << " denied " << stats.denied
      << " errors " << stats.errors << " unknown " << stats.unknown << '\n';
  for (const auto& [kind, count] : stats.error_kinds)
    out << "error " << kind << ' ' << count << '\n';
  for (const auto& [status, count] : stats.status_counts)
    out << "status " << status << ' ' << count << '\n';
  const auto& retry = stats.retry;
  out << "hints " << retry.present << ' ' << retry.missing << ' ' << retry.invalid << ' '
      << retry.over_bound << ' ' << retry.min_ms.value_or(-999) << ' '
      << retry.max_ms.value_or(-999) << ' ' << retry.expected << '\n';
  put(out, "worst", stats.contract.worst);
  out << "worst identity " << stats.contract.worst_identity << '\n';
  put(out, "boundary", stats.contract.boundary_burst);
  put(out, "peak", stats.peak);
  out << "send span " << stats.send_span_ns << " memory " << stats.memory_ns << '\n';
  const auto& share = stats.utilisation;
  out << "utilisation " << share.identity << ' ' << share.admitted << ' ' << share.unknown << ' '
      << share.allowed << '\n';
  const auto& locked = stats.lockouts;
  out << "lock-outs " << locked.judged << ' ' << locked.count << '\n';
  if (locked.worst) {
    out << "worst lock-out " << locked.worst->identity << ' ' << locked.worst->seq << ' '
        << locked.worst->sent_ns << ' ' << locked.worst->used << ' ' << locked.worst->capacity
        << '\n';
  }
  const auto& hints = stats.retry_accuracy;
  out << "hint accuracy " << hints.errors.size() << ' ' << hints.early << ' ' << hints.late << ' '
      << hints.unexplained << ' ' << hints.finer_hints_whole_seconds << '\n';
  for (const auto& [error_ms, count] : hints.errors.counts())
    out << "hint error " << error_ms << ' ' << count << '\n';
  if (const auto& worst = hints.errors.worst()) {
    out << "worst hint " << worst->identity << ' ' << worst->seq << ' ' << worst->hint_ms << ' '
        << worst->error_ms << '\n';
  }
  for (const int32_t resolution : hints.resolutions)
    out << "resolution " << resolution << '\n';
  if (locked.denial_counting) {
    const auto& counting = *locked.denial_counting;
    out << "denial counting " << counting.identity << ' ' << counting.last_admitted_ns << ' '
        << counting.denials << ' ' << counting.offered_per_s << '\n';
  }
  return out.str();
}

// Collects what a Sequencer releases, and audits it.
class Collect final : public RecordConsumer {
 public:
  explicit Collect(const AuditParams& audit) : audit(audit) {}
  void begin(int64_t start_wall_ns, const Schedule*) override { audit.begin(start_wall_ns); }
  void consume(std::span<const RequestRecord> records) override {
    for (const RequestRecord& record : records) {
      released.push_back(record);
      audit.add(record);
    }
  }
  StreamAudit audit;
  std::vector<RequestRecord> released;
};

// Two workers handing records over as their replies come, each with its low water: the
// earliest send among its requests still on the wire, else the moment it hands over.
struct Replay {
  uint64_t late = 0;
  size_t most_held = 0;
};

Replay replay(Sequencer& sequencer, std::vector<RequestRecord> records) {
  constexpr int k_workers = 2;
  std::stable_sort(
      records.begin(), records.end(),
      [](const RequestRecord& a, const RequestRecord& b) { return a.replied_ns < b.replied_ns; });
  const auto worker_of = [](const RequestRecord& record) {
    return static_cast<int>(record.seq % k_workers);
  };
  sequencer.begin(k_start_wall_ns, nullptr, k_workers);
  for (size_t i = 0; i < records.size(); ++i) {
    const RequestRecord& record = records[i];
    const int worker = worker_of(record);
    const int64_t now = record.replied_ns;
    int64_t low = now;
    for (size_t j = i + 1; j < records.size(); ++j) {
      if (worker_of(records[j]) == worker && records[j].sent_ns <= now)
        low = std::min(low, records[j].sent_ns);
    }
    sequencer.take(worker, std::span<const RequestRecord>(&record, 1), low);
  }
  for (int worker = 0; worker < k_workers; ++worker)
    sequencer.take(worker, {}, INT64_MAX);
  sequencer.finish();
  return {sequencer.late(), sequencer.most_held()};
}

RunStats streamed(const std::vector<RequestRecord>& records, const AuditParams& audit,
                  uint64_t* late = nullptr) {
  Collect collect(audit);
  Sequencer sequencer(collect);
  const Replay replayed = replay(sequencer, records);
  if (late != nullptr)
    *late = replayed.late;
  REQUIRE(collect.released.size() == records.size());
  RunResult result;
  RunStats stats = rlcheck::checks::summarize_measures(1, result);
  collect.audit.finish(stats);
  return stats;
}

RunStats batch(const std::vector<RequestRecord>& records, const AuditParams& audit) {
  RunResult result;
  result.records = rlcheck::engine::RecordLog(records);
  result.start_wall_ns = k_start_wall_ns;
  return rlcheck::checks::summarize_run(1, result, audit);
}

}  // namespace

TEST_CASE("a streamed audit gives the batch audit's figures on the same records") {
  using Kind = AdmissionRule::Kind;
  struct Variant {
    const char* name;
    Kind kind;
    bool own_clock;
    bool named_windows;
    bool fresh = false;
  };
  const Variant variants[] = {{"sliding", Kind::sliding, false, false},
                              {"bucket", Kind::bucket, false, false},
                              {"fixed, wall windows", Kind::fixed, false, false},
                              {"fixed, named windows", Kind::fixed, false, true},
                              {"fixed, own clock", Kind::fixed, true, true},
                              {"sliding, fresh", Kind::sliding, false, false, true},
                              {"bucket, fresh", Kind::bucket, false, false, true},
                              {"fixed, fresh", Kind::fixed, false, false, true}};
  int breaches = 0, lock_outs = 0, denial_counting = 0, unknown_shares = 0, judged_hints = 0;
  for (const Variant& variant : variants) {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      const auto identities = static_cast<uint32_t>(1 + seed % 4);
      const int64_t grid = seed % 2 == 0 ? k_ms : 5 * k_ms;  // fine, and coarse enough to tie
      const auto records = records_of(seed, identities, 200 + static_cast<int>(seed) * 10, grid,
                                      variant.named_windows);
      AuditParams audit = params_of(variant.kind, identities);
      audit.own_clock_windows = variant.own_clock;
      audit.fresh_state = variant.fresh;
      audit.rule.fresh_state = variant.fresh;
      CAPTURE(variant.name);
      CAPTURE(seed);
      uint64_t late = 0;
      const RunStats stream = streamed(records, audit, &late);
      CHECK(late == 0);
      CHECK(stream.streamed);
      CHECK(stream.streamed_out_of_order == 0);
      CHECK(stream.streamed_closed_window == 0);
      const RunStats oracle = batch(records, audit);
      CHECK(figures(stream) == figures(oracle));
      breaches += oracle.contract.worst.exceeded() ? 1 : 0;
      lock_outs += oracle.lockouts.count > 0 ? 1 : 0;
      denial_counting += oracle.lockouts.denial_counting ? 1 : 0;
      unknown_shares += oracle.utilisation.unknown > 0 ? 1 : 0;
      judged_hints += oracle.retry_accuracy.errors.size() > 5 ? 1 : 0;
    }
  }
  CHECK(lock_outs > 20);
  CHECK(judged_hints > 20);
  CHECK(denial_counting > 5);
  CHECK(unknown_shares > 5);
  // The record sets are ones where the audits have something to find, and ones where not.
  CHECK(breaches > 20);
  CHECK(breaches < 8 * 40);
}

TEST_CASE("the sequencer releases records in send order once every worker is past them") {
  const AuditParams audit = params_of(AdmissionRule::Kind::sliding, 1);
  const auto records = records_of(7, 1, 500, k_ms, false);
  Collect collect(audit);
  Sequencer sequencer(collect);
  const Replay replayed = replay(sequencer, records);
  REQUIRE(collect.released.size() == records.size());
  CHECK(std::is_sorted(collect.released.begin(), collect.released.end(),
                       [](const RequestRecord& a, const RequestRecord& b) {
                         return std::tie(a.sent_ns, a.replied_ns) <
                                std::tie(b.sent_ns, b.replied_ns);
                       }));
  CHECK(replayed.late == 0);
  // Held: only what completed while an earlier request was on the wire.
  CHECK(replayed.most_held > 0);
  CHECK(replayed.most_held < records.size() / 10);

  // A worker that said nothing yet holds everything back; a record sent before what was
  // released comes late, and is counted so.
  Collect waiting(audit);
  Sequencer held(waiting);
  held.begin(0, nullptr, 2);
  held.take(0, std::span<const RequestRecord>(records.data(), 10), INT64_MAX);
  CHECK(waiting.released.empty());
  held.take(1, {}, INT64_MAX);
  CHECK(waiting.released.size() == 10);
  RequestRecord stale = records.front();
  stale.sent_ns = -1;
  held.take(1, std::span<const RequestRecord>(&stale, 1), INT64_MAX);
  CHECK(held.late() == 1);
}

TEST_CASE("an admission out of send order is left out of the window audit and counted") {
  AuditParams audit = params_of(AdmissionRule::Kind::sliding, 1);
  StreamAudit stream(audit);
  RequestRecord admitted;
  admitted.outcome = Outcome::allowed;
  admitted.sent_ns = 10 * k_ms;
  admitted.replied_ns = 11 * k_ms;
  stream.add(admitted);
  admitted.sent_ns = 5 * k_ms;
  stream.add(admitted);
  RunResult result;
  RunStats stats = rlcheck::checks::summarize_measures(1, result);
  stream.finish(stats);
  CHECK(stats.allowed == 2);
  CHECK(stats.peak.count == 1);
  CHECK(stats.streamed_out_of_order == 1);
}

// A soak's fixed windows: `windows` windows of k_window_ms, each identity sending a few
// requests in each (some admitted beyond the limit, some denied), replies a few ms later.
std::vector<RequestRecord> soak_records(uint32_t identities, int windows, bool named_windows) {
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  for (int window = 0; window < windows; ++window) {
    for (int k = 0; k < 6; ++k) {
      for (uint32_t identity = 0; identity < identities; ++identity) {
        RequestRecord record;
        record.seq = seq++;
        record.identity = identity;
        record.sent_ns = (window * k_window_ms + k * 15 + identity) * k_ms;
        record.replied_ns = record.sent_ns + 2 * k_ms;
        record.outcome = k < 4 + (window % 3 == 0 ? 1 : 0) ? Outcome::allowed : Outcome::denied;
        if (record.outcome == Outcome::denied)
          record.retry_ms = k_window_ms - k * 15;
        if (named_windows)
          record.bucket =
              rlcheck::checks::wall_window(k_start_wall_ns, record.sent_ns, k_window_ms * k_ms);
        records.push_back(record);
      }
    }
  }
  return records;
}

TEST_CASE("a streamed fixed-window audit holds a few windows an identity, however long it runs") {
  constexpr uint32_t k_identities = 3;
  constexpr int k_windows = 3'000;
  for (const bool named : {false, true}) {
    CAPTURE(named);
    const auto records = soak_records(k_identities, k_windows, named);
    AuditParams audit = params_of(AdmissionRule::Kind::fixed, k_identities);
    StreamAudit stream(audit);
    stream.begin(k_start_wall_ns);
    size_t most_held = 0;
    for (const RequestRecord& record : records) {
      stream.add(record);
      most_held = std::max(most_held, stream.windows_held());
    }
    // Per identity: its first three windows' keys for key-ttl, and a few open windows in each
    // audit; never one entry per window it ran through (3 000 here).
    CHECK(most_held < 40 * k_identities);
    CHECK(stream.closed_window() == 0);
    RunResult result;
    RunStats stats = rlcheck::checks::summarize_measures(1, result);
    stream.finish(stats);
    const RunStats oracle = batch(records, audit);
    CHECK(figures(stats) == figures(oracle));
    // Every third window admits 5 against a limit of 4: the forgotten windows still count.
    CHECK(oracle.contract.worst.count == 5);
    CHECK(stats.contract.worst.count == 5);
  }
}

TEST_CASE("a streamed fixed window closes by the limiter's clock, not by a slow request") {
  // k_start_wall_ns is 99 970 ms on the wall clock: windows of 100 ms, the first is 999, and
  // the limiter's clock agrees with ours.
  AuditParams audit = params_of(AdmissionRule::Kind::fixed, 1);
  StreamAudit stream(audit);
  stream.begin(k_start_wall_ns);
  const auto admission = [&](int64_t sent_ms, int64_t replied_ms, int64_t window) {
    RequestRecord record;
    record.outcome = Outcome::allowed;
    record.sent_ns = sent_ms * k_ms;
    record.replied_ns = replied_ms * k_ms;
    record.bucket = window;
    stream.add(record);
  };
  for (int64_t ms = 0; ms < 4; ++ms)
    admission(ms, ms + 1, 999);
  admission(40, 41, 1'000);
  // A slow request decided in window 1 003, then quicker ones sent after it, decided earlier,
  // in window 1 000: each named what the clock allowed, and all are audited.
  admission(50, 400, 1'003);
  for (int64_t ms = 51; ms < 54; ++ms)
    admission(ms, ms + 1, 1'000);
  CHECK(stream.closed_window() == 0);
  // Window 998 after the limiter named 1 000: its clock went back; counted, not audited.
  for (int64_t ms = 60; ms < 68; ++ms)
    admission(ms, ms + 1, 998);
  CHECK(stream.closed_window() == 8);
  RunResult result;
  RunStats stats = rlcheck::checks::summarize_measures(1, result);
  stream.finish(stats);
  CHECK(stats.streamed_closed_window == 8);
  CHECK(stats.allowed == 17);
  CHECK(stats.contract.worst.count == 4);  // 999 and 1 000 held 4 each
}

TEST_CASE("an admission in a closed fixed window still counts against a waiting denial's room") {
  AuditParams audit = params_of(AdmissionRule::Kind::fixed, 1);
  audit.fresh_state = true;  // judge denials from the start
  audit.rule.fresh_state = true;
  const auto lock_outs = [&](bool closed_admission) {
    StreamAudit stream(audit);
    stream.begin(k_start_wall_ns);
    const auto add = [&](int64_t sent_ms, int64_t window, Outcome outcome) {
      RequestRecord record;
      record.outcome = outcome;
      record.sent_ns = sent_ms * k_ms;
      record.replied_ns = record.sent_ns + k_ms;
      record.bucket = window;
      if (outcome == Outcome::denied)
        record.retry_ms = 50;
      stream.add(record);
    };
    for (int64_t ms = 40; ms < 43; ++ms)
      add(ms, 1'000, Outcome::allowed);
    add(44, 1'000, Outcome::denied);  // 3 of 4 seen: room, unless something else was admitted
    if (closed_admission)
      add(45, 998, Outcome::allowed);  // the limiter's clock went back: window 998 is closed
    add(60, 1'000, Outcome::denied);
    RunResult result;
    RunStats stats = rlcheck::checks::summarize_measures(1, result);
    stream.finish(stats);
    CHECK(stats.streamed_closed_window == (closed_admission ? 1 : 0));
    return stats.lockouts.count;
  };
  CHECK(lock_outs(false) == 2);
  // Left out of the windows, the admission still may have taken the room: no lock-out proven.
  CHECK(lock_outs(true) == 0);
}
