#include "checks/run_stats.hpp"

#include <algorithm>
#include <unordered_map>

#include "checks/fault_checks.hpp"

namespace rlcheck::checks {
namespace {

double to_ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

void widen(std::optional<int64_t>& low, std::optional<int64_t>& high,
           const std::optional<int64_t>& value) {
  if (!value)
    return;
  low = std::min(low.value_or(*value), *value);
  high = std::max(high.value_or(*value), *value);
}

void count_advertised(AdvertisedStats& stats, const engine::RequestRecord& record) {
  widen(stats.limit_min, stats.limit_max, record.advertised_limit);
  widen(stats.remaining_min, stats.remaining_max, record.remaining);
  widen(stats.reset_min_s, stats.reset_max_s, record.advertised_reset_s);
  if (record.header_problem)
    ++stats.malformed;
}

void count_hint(RetryHintStats& stats, const engine::RequestRecord& record,
                int64_t max_retry_after_ms) {
  stats.expected =
      stats.expected || record.hint_expected || record.retry_ms.has_value() || record.hint_invalid;
  if (record.hint_invalid) {
    ++stats.present;
    ++stats.invalid;
    return;
  }
  if (!record.retry_ms) {
    if (record.hint_expected)
      ++stats.missing;
    return;
  }
  const int64_t hint = *record.retry_ms;
  ++stats.present;
  if (hint < 0)
    ++stats.invalid;
  if (hint > max_retry_after_ms)
    ++stats.over_bound;
  stats.min_ms = std::min(stats.min_ms.value_or(hint), hint);
  stats.max_ms = std::max(stats.max_ms.value_or(hint), hint);
}

int64_t send_span(engine::RecordView records) {
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.outcome(i) == engine::Outcome::error)
      continue;
    first = std::min(first, records.sent_ns(i));
    last = std::max(last, records.sent_ns(i));
  }
  return first <= last ? last - first : 0;
}

// Drops the window index every record carries, so the audits place them on rlcheck's clock.
void forget_windows(engine::RecordLog& records) {
  for (size_t i = 0; i < records.size(); ++i) {
    engine::RequestRecord record = records[i];
    if (record.bucket == 0)
      continue;
    record.bucket = 0;
    records.set(i, record);
  }
}

// --contract ban: denials and hints are judged against the bans, not the window alone; a
// replay of the window (the share) says nothing of a limiter that bans.
void apply_ban_audit(RunStats& stats, const IdentityRecords& identities, const AdmissionRule& rule,
                     const BanRule& ban, int64_t start_wall_ns, const AuditParams& audit) {
  BanAudit bans =
      audit_bans(identities, rule, ban, start_wall_ns, audit.fresh_state, audit.tolerance);
  stats.lockouts = std::move(bans.lockouts);
  stats.retry_accuracy = std::move(bans.retry);
  bans.lockouts = {};
  bans.retry = {};
  stats.ban = std::move(bans);
  stats.share_judged = false;
}

}  // namespace

namespace {

// A concurrency cap has no window: its own audit stands for the contract, limit and lock-outs
// (a replay's share and window-bound hints mean nothing for it, and are left unjudged).
IdentityRecords audit_concurrency_run(RunStats& stats, engine::RecordLog& records,
                                      const AuditParams& audit) {
  IdentityRecords identities = split_by_identity(records, audit.identities);
  const ConcurrencyAudit& found =
      stats.concurrency.emplace(audit_concurrency(identities, *audit.concurrency, stats.lockouts));
  AdmissionPeak worst;
  worst.count = found.surely_at_once;
  worst.allowance = static_cast<double>(found.cap);
  worst.start_ns = found.surely_at_ns;
  stats.contract.worst = worst;
  stats.contract.worst_identity = found.surely_identity;
  stats.peak = worst;
  stats.admitted_at_once = found.possibly_at_once;
  stats.share_judged = false;
  stats.send_span_ns = send_span(records);
  return identities;
}

// A slow-down denies nothing and has no admission limit: its own audit stands for the contract
// and the delays (the replay's share and lock-outs mean nothing for it, and are left unjudged).
IdentityRecords audit_slow_down_run(RunStats& stats, engine::RecordLog& records,
                                    int64_t start_wall_ns, const AuditParams& audit,
                                    SlowDownPromises* promises) {
  IdentityRecords identities = split_by_identity(records, audit.identities);
  stats.slow_down =
      audit_slow_down(identities, *audit.slow_down, start_wall_ns, audit.fresh_state, promises);
  stats.share_judged = false;
  stats.send_span_ns = send_span(records);
  return identities;
}

}  // namespace

IdentityRecords audit_run(RunStats& stats, engine::RecordLog& records, int64_t start_wall_ns,
                          const AuditParams& audit, SlowDownPromises* slow_down_promises) {
  if (audit.concurrency)
    return audit_concurrency_run(stats, records, audit);
  if (audit.slow_down)
    return audit_slow_down_run(stats, records, start_wall_ns, audit, slow_down_promises);
  // Sliding-window counters on the clock place their windows by the run's start.
  if (!audit.parts.empty() || audit.weighted) {
    // Costs: one contract audited as a part of its own, over records counted in units.
    AuditParams parts = audit;
    if (parts.parts.empty())
      parts.parts.push_back(ContractPart{"", "", audit.rule, false, false});
    IdentityRecords identities = audit_composite(stats, records, start_wall_ns, parts);
    if (audit.parts.empty())
      stats.parts.clear();
    stats.weighted = audit.weighted;
    stats.send_span_ns = send_span(records);
    return identities;
  }
  AdmissionRule rule = audit.rule;
  rule.start_wall_ns = start_wall_ns;
  if (audit.own_clock_windows)
    forget_windows(records);
  if (rule.kind == AdmissionRule::Kind::fixed)
    assign_wall_windows(records, start_wall_ns, rule);
  IdentityRecords identities = split_by_identity(records, audit.identities);
  stats.contract = audit_contract(identities, rule);
  stats.peak = stats.contract.worst;
  // Only an over-admission asks how many were admitted in flight at once (a serial rerun's
  // cue): a pass costs no pass over the records for it.
  if (stats.peak.exceeded())
    stats.admitted_at_once = admitted_in_flight_at_once(identities);
  // A queue's contract is its departures; `limit` keeps judging the arrivals.
  if (audit.queue_depth) {
    stats.queue = audit_queue(identities, rule, *audit.queue_depth, audit.queue_nodelay);
    stats.contract.worst = stats.queue->departures;
    stats.contract.worst_identity = stats.queue->departures_identity;
  }
  if (audit.clock_skews > 0 && stats.contract.worst_identity < identities.size()) {
    stats.contract.worst_by_skew = tally_by_skew(identities[stats.contract.worst_identity],
                                                 stats.contract.worst, audit.clock_skews);
  }
  stats.utilisation = measure_utilisation(identities, rule, start_wall_ns);
  // A stepped bucket's replay places its ticks one way of many: no under-admission proof.
  stats.share_judged = !rule.stepped();
  stats.memory_ns = contract_memory_ns(rule);
  stats.send_span_ns = send_span(records);
  stats.lockouts =
      find_lockouts(identities, rule, start_wall_ns, audit.fresh_state ? 0 : stats.memory_ns);
  stats.retry_accuracy = measure_retry_accuracy(identities, rule, start_wall_ns, audit.tolerance);
  if (audit.ban)
    apply_ban_audit(stats, identities, rule, *audit.ban, start_wall_ns, audit);
  return identities;
}

namespace {

// --stages: each stage's plan from the schedule, and its tallies from the run.
std::vector<StageStats> stage_stats(const engine::RunResult& result) {
  std::vector<StageStats> stages;
  if (!result.schedule || result.schedule->stage_count() != result.stages.size())
    return stages;
  const engine::Schedule& schedule = *result.schedule;
  for (size_t k = 0; k < result.stages.size(); ++k) {
    const engine::StageTally& tally = result.stages[k];
    StageStats stage;
    stage.from_ms = to_ms(schedule.stage_from_ns(k));
    stage.to_ms = to_ms(schedule.stage_to_ns(k));
    stage.target_from_per_s = schedule.stage_from_rate(k);
    stage.target_to_per_s = schedule.stage_to_rate(k);
    stage.planned = tally.planned;
    stage.sent = tally.sent;
    stage.allowed = tally.allowed;
    stage.denied = tally.denied;
    stage.errors = tally.errors;
    stage.latency_p50_ms = to_ms(tally.latency_ns.percentile(50));
    stage.latency_p99_ms = to_ms(tally.latency_ns.percentile(99));
    stage.lateness_p99_ms = to_ms(tally.lateness_ns.percentile(99));
    stages.push_back(stage);
  }
  return stages;
}

}  // namespace

void tally_record(RunStats& stats, const engine::RequestRecord& record,
                  int64_t max_retry_after_ms) {
  if (record.outcome == engine::Outcome::allowed)
    stats.allowed_units += record.cost;
  else if (record.outcome == engine::Outcome::denied)
    stats.denied_units += record.cost;
  ++stats.requests;
  if (record.status != 0) {
    ++stats.status_counts[std::to_string(record.status)];
    count_advertised(stats.advertised, record);
  }
  switch (record.outcome) {
    case engine::Outcome::allowed:
      ++stats.allowed;
      break;
    case engine::Outcome::denied:
      ++stats.denied;
      count_hint(stats.retry, record, max_retry_after_ms);
      // Denials without any hint count as missing once the limiter is seen to give hints.
      if (!record.retry_ms && !record.hint_expected && !record.hint_invalid)
        ++stats.retry.silent;
      break;
    case engine::Outcome::error:
      ++stats.errors;
      stats.unknown += engine::is_unknown(record) ? 1 : 0;
      ++stats.error_kinds[record.error == engine::ErrorKind::status
                              ? "status-" + std::to_string(record.status)
                              : std::string(engine::error_kind_name(record.error))];
      if (record.error == engine::ErrorKind::status && record.retry_ms)
        ++stats.hinted_status_errors["status-" + std::to_string(record.status)];
      break;
  }
}

void finish_tally(RunStats& stats) {
  // Denials without any hint, from a limiter that gives hints elsewhere in the run, count too.
  if (stats.retry.expected)
    stats.retry.missing += stats.retry.silent;
}

RunStats summarize_measures(int run, const engine::RunResult& result) {
  RunStats stats;
  stats.run = run;
  stats.interrupted = result.interrupted;
  stats.stopped_on_errors = result.stopped_on_errors;
  stats.by_node = result.by_node;
  stats.duration_ms = to_ms(result.virtual_clock ? result.real_duration_ns : result.duration_ns);
  if (result.virtual_clock)
    stats.virtual_span_ms = to_ms(result.duration_ns);
  stats.retry.invalid_sample = result.hint_sample;
  stats.advertised.malformed_sample = result.header_sample;
  for (const auto& [kind, message] : result.error_samples) {
    stats.error_samples[engine::error_kind_name(kind)] = message;
  }
  const auto& latency = result.latency_ns;
  stats.latency = {to_ms(latency.percentile(50)), to_ms(latency.percentile(90)),
                   to_ms(latency.percentile(99)), to_ms(latency.max()),
                   to_ms(latency.percentile(99.9))};
  if (result.lateness_ns.count() > 0) {
    const auto& late = result.lateness_ns;
    stats.lateness =
        LatenessMs{to_ms(late.percentile(50)), to_ms(late.percentile(99)), to_ms(late.max())};
  }
  stats.stages = stage_stats(result);
  stats.limiter_clock = result.limiter_clock;
  return stats;
}

void place_leases(engine::RecordLog& records,
                  const std::vector<std::pair<uint64_t, int64_t>>& lease_ends, int64_t hold_ns) {
  std::unordered_map<uint64_t, int64_t> ends(lease_ends.begin(), lease_ends.end());
  int64_t last = 0;
  for (size_t i = 0; i < records.size(); ++i)
    last = std::max(last, records[i].replied_ns);
  for (const auto& [seq, end] : lease_ends) {
    if (end != INT64_MAX)
      last = std::max(last, end);
  }
  // Past every reply: no denial the audit judges comes after it.
  const int64_t to_the_end = last + 1;
  for (size_t i = 0; i < records.size(); ++i) {
    engine::RequestRecord record = records[i];
    if (record.outcome != engine::Outcome::allowed)
      continue;
    const auto found = ends.find(record.seq);
    const int64_t end =
        found == ends.end() || found->second == INT64_MAX ? to_the_end : found->second;
    // Its release left `hold` after the acquire's reply at the soonest, and a release that
    // failed left the place taken then: never read shorter, so the audit's sure span
    // [end - hold, send + hold) stays inside [acquire reply, acquire reply + hold).
    record.replied_ns = std::max(end, record.replied_ns + hold_ns);
    records.set(i, record);
  }
}

void allow_clock_uncertainty(AuditParams& audit, int64_t ns) {
  audit.rule.clock_ns += ns;
  audit.tolerance.clock_ms += (ns + 999'999) / 1'000'000;
}

RunStats summarize_run(int run, engine::RunResult& result, const AuditParams& audit_params,
                       std::vector<FaultWindow> faults) {
  RunStats stats = summarize_measures(run, result);
  // A limiter's clock proven off rlcheck's rate: every audit allows for the whole difference.
  std::optional<AuditParams> widened;
  if (result.limiter_clock && result.limiter_clock->slack_ns > 0)
    allow_clock_uncertainty(widened.emplace(audit_params), result.limiter_clock->slack_ns);
  const AuditParams& audit = widened ? *widened : audit_params;
  engine::RecordCursor cursor(result.records);
  for (size_t i = 0; i < result.records.size(); ++i)
    tally_record(stats, cursor[i], audit.max_retry_after_ms);
  finish_tally(stats);
  stats.faults = std::move(faults);
  measure_faults(stats.faults, result.records);
  if (audit.concurrency && audit.concurrency->released_by_run)
    place_leases(result.records, result.lease_ends, audit.concurrency->hold_ns.value_or(0));
  SlowDownPromises slow_down_promises;  // the timeline's, dropped with this call
  const IdentityRecords identities = audit_run(stats, result.records, result.start_wall_ns, audit,
                                               audit.timeline ? &slow_down_promises : nullptr);
  if (audit.timeline) {
    stats.timeline = build_timeline(identities, audit.rule, result.duration_ns,
                                    stats.contract.worst_identity, audit.weighted);
    add_timeline_parts(*stats.timeline, audit.parts);
    if (stats.concurrency) {
      // Possibly in flight as the report counts it (send to reply), not the lock-outs' slack.
      add_in_flight(*stats.timeline, identities, stats.concurrency->cap, stats.concurrency->hold_ns,
                    0);
    }
    if (stats.ban)
      add_ban_spans(*stats.timeline, stats.ban->spans);
    if (stats.queue)
      add_queue_waits(*stats.timeline, identities, *stats.queue);
    if (stats.slow_down)
      add_slow_down_waits(*stats.timeline, identities, *stats.slow_down, slow_down_promises);
    if (result.schedule)
      add_offered_rate(*stats.timeline, identities, *result.schedule);
  }
  return stats;
}

bool settle_hint_resolution(std::vector<RunStats>& runs, config::HintResolution mode,
                            const AccuracyTolerance& tolerance) {
  if (mode == config::HintResolution::milliseconds)
    return false;
  if (mode == config::HintResolution::auto_detect) {
    // Whole seconds only where the instants were not: a virtual clock at 1/s puts every
    // instant, and so every millisecond hint, on whole seconds.
    const bool whole = std::ranges::all_of(
        runs, [](const RunStats& run) { return run.retry_accuracy.finer_hints_whole_seconds; });
    const bool off_grid = std::ranges::any_of(
        runs, [](const RunStats& run) { return run.retry_accuracy.instants_off_second_grid; });
    if (!whole || !off_grid)
      return false;
  }
  bool judged = false;
  for (RunStats& run : runs) {
    judge_as_whole_seconds(run.retry_accuracy, tolerance);
    judged = judged || run.retry_accuracy.judged_as_whole_seconds;
  }
  return judged;
}

}  // namespace rlcheck::checks
