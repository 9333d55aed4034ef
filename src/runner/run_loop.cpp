#include "runner/run_loop.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "engine/request_clock.hpp"
#include "faults/fault_schedule.hpp"
#include "runner/clock_watch.hpp"
#include "runner/evidence.hpp"
#include "runner/find_max.hpp"
#include "runner/judgement.hpp"
#include "runner/retry_verification.hpp"
#include "runner/serial_rerun.hpp"
#include "runner/shared_test.hpp"
#include "runner/stream_run.hpp"

namespace rlcheck::runner {
namespace {

// What --fault acts on, once checked that every fault can: restart@ needs the private
// redis-server (else usage), failover@ a cluster whose masters have replicas (else
// cannot_test).
faults::FaultTarget vetted_fault_target(Target& target, const config::Config& config) {
  faults::FaultTarget fault_target = target.fault_target();
  const std::vector<config::FaultSpec>& faults = config.faults.faults;
  if (faults.empty())
    return fault_target;
  if (auto refusal = faults::restart_refusal(fault_target, faults))
    throw base::usage_error(*refusal);
  if (auto supported = faults::check_failover_support(fault_target, faults); !supported)
    throw base::cannot_test(supported.error());
  return fault_target;
}

// Why no request of a run could reach the target, when none could: no connection became
// ready before the start line (redis), or every request failed to connect (http, whose
// connections open with the requests).
// `streamed`: the run's audit, which saw the records the result does not keep.
std::optional<std::string> no_connection(const engine::RunResult& result,
                                         const checks::StreamAudit* streamed) {
  if (result.clients_ready == 0)
    return result.connect_error;
  std::optional<engine::ErrorKind> first;
  if (streamed != nullptr) {
    first = streamed->never_connected();
  } else {
    if (result.records.size() == 0)
      return std::nullopt;
    for (const engine::RequestRecord& record : result.records) {
      if (record.outcome != engine::Outcome::error || !engine::never_connected(record.error))
        return std::nullopt;
      if (!first && record.error != engine::ErrorKind::not_sent)
        first = record.error;
    }
  }
  if (!first)
    return std::nullopt;
  const auto sample = result.error_samples.find(*first);
  return sample != result.error_samples.end() ? sample->second
                                              : std::string(engine::error_kind_name(*first));
}

void add_counters(RunCounters& total, const RunCounters& more) {
  for (const auto& [name, count] : more)
    total[name] += count;
}

// A virtual run starts where the last one ended (plus --between-runs, which costs nothing on
// the virtual clock), or at the wall clock if that is later: the limiter's clock never goes
// back.
int64_t next_virtual_origin(int64_t last_end_ns, const config::Config& config) {
  const int64_t after_last = last_end_ns + config.http.between_runs.count() + 1'000'000;
  return engine::next_whole_ms(std::max(engine::wall_now_ns(), after_last));
}

// The seed of a run's random arrivals: the run's state seed (from --seed, so it reproduces).
// Many hosts without --seed: from the session's name, so every worker plans the same instants.
uint64_t schedule_seed(const config::Config& config, const StateChoice& state, int run) {
  if (config.seed || !config.workers.distributed())
    return state.seed;
  uint64_t hash = 14695981039346656037ULL;  // FNV-1a
  for (const char c : config.workers.session)
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return hash + static_cast<uint64_t>(run);
}

}  // namespace

report::Report run_test(Target& target, const config::Config& config, const RunOutputs& outputs) {
  coord::Session* shared = outputs.shared;
  // Many hosts: worker 0 prepares, merges and judges; the others only send their share.
  const bool leader = shared == nullptr || shared->leader();
  faults::FaultApplier fault_applier(vetted_fault_target(target, config));
  target.prepare_test();
  Evidence evidence(target, config, shared);
  // Errors above --max-errors already decide the test: a run stops sending once it has them.
  // With --fault, errors are what the test provokes, and what follows them (recovery) is
  // measured: the run goes on to its end.
  config::LoadConfig load = config.load;
  if (config.faults.faults.empty())
    load.stop_after_errors = config.checks.max_errors;

  TestLog log;
  std::optional<FindMaxSearch> search;  // --find-max: each run is a step of the search
  if (config.find_max.enabled) {
    const config::Rate& start = *config.load.rate;
    search.emplace(
        config.find_max,
        static_cast<double>(start.tokens) * 1e9 / static_cast<double>(start.period.count()),
        config.checks.max_errors);
  }
  std::optional<Monitor> own_monitor;
  Monitor& monitor =
      outputs.monitor != nullptr ? *outputs.monitor : own_monitor.emplace(config, /*serve=*/false);
  // --audit stream: each run's records are audited as they come (null: kept and audited after).
  const checks::AuditParams* stream_audit = evidence.stream_audit();
  int64_t virtual_end_ns = 0;  // --virtual-clock: where the last run's virtual time ended
  const int runs = config.load.runs;
  int runs_shipped = 0;  // many hosts: the runs this worker sent its share of
  for (int run = 1; search ? search->next_rate().has_value() : run <= runs; ++run) {
    if (search)
      load = search->next_load(load);
    if (!target.prepare_run(run, leader)) {
      log.interrupted = true;
      break;
    }
    if (load.virtual_clock && run > 1)
      load.virtual_origin_ns = next_virtual_origin(virtual_end_ns, config);
    const StateChoice state = target.run_state(run);
    load.schedule_seed = schedule_seed(config, state, run);
    const RunClients clients = target.clients(state, load);
    faults::FaultSchedule fault_schedule(
        leader ? config.faults.faults : std::vector<config::FaultSpec>{}, fault_applier,
        clients.failover_key, outputs.observer);
    RunCounters others;  // worker 0: the other workers' transport counts of this run
    const std::string label =
        search ? fmt::format("{} at {}/s", target.run_label(run, run), *search->next_rate())
               : target.run_label(run, runs);
    engine::RunHooks hooks =
        monitor.begin_run(target.records_name(), run, label, clients.load, &fault_schedule);
    std::optional<StreamRun> stream;
    if (stream_audit != nullptr) {
      report::RunContext context;
      context.first_seq = clients.load.first_seq;
      stream.emplace(*stream_audit, outputs.records, target.records_name(), run, context);
      hooks.sink = &stream->sink();
    }
    ClockWatch clock_watch(target, !clients.load.virtual_clock);
    hooks.tick = [&clock_watch, lag = std::move(hooks.tick)] {
      clock_watch.sample();
      if (lag)
        lag();  // the monitor's watch on the schedule
    };
    engine::RunResult result = execute_shared_run(shared, run, *clients.factory, clients.load,
                                                  hooks, clients.counters, others);
    result.limiter_clock = clock_watch.finish();
    if (clients.finish)
      clients.finish(result);
    monitor.end_run();
    std::vector<checks::FaultWindow> fault_windows = fault_schedule.finish();
    if (!leader) {
      if (shared_runs_end(result, *shared, runs_shipped))
        break;
      continue;
    }
    if (result.cancelled)
      break;  // a worker was lost before the run could start
    // Nothing measured yet: the test could not start. Once a run has, a later run without a
    // connection is reported with the others (its requests are errors).
    std::optional<checks::StreamAudit> streamed;
    if (stream) {
      streamed.emplace(stream->take_audit());
      stream.reset();
    }
    if (run == 1 && !result.interrupted) {
      if (const auto why = no_connection(result, streamed ? &*streamed : nullptr)) {
        throw base::cannot_test(
            fmt::format("no connection to {} became ready: {}", target.address(), *why));
      }
    }
    if (search && !result.interrupted)
      search->observe(count_step(result, static_cast<uint64_t>(clients.load.requests),
                                 static_cast<uint64_t>(clients.load.concurrency)));
    if (outputs.records != nullptr && !result.streamed) {
      report::RunContext context;
      context.start_wall_ns = result.start_wall_ns;
      context.schedule = result.schedule.get();
      context.first_seq = clients.load.first_seq;
      context.virtual_clock = result.virtual_clock;
      context.share_count =
          config.workers.distributed() ? static_cast<uint64_t>(config.workers.count) : 1;
      outputs.records->write_run(target.records_name(), run, result.records, context);
    }
    virtual_end_ns = result.start_wall_ns + result.duration_ns;
    engine::RecordLog touched;  // streamed: what the run's records touched
    engine::RunResult* kept_result = nullptr;
    if (streamed) {
      touched = streamed->touched();
      kept_result = &evidence.keep_streamed(run, std::move(result), std::move(*streamed));
    } else {
      kept_result = &evidence.keep(run, std::move(result), std::move(fault_windows));
    }
    engine::RunResult& kept = *kept_result;
    const StateAudit audit =
        target.audit_state(run, stream_audit != nullptr ? touched.view() : kept.records.view());
    std::vector<engine::RequestRecord> retried;
    if (config.checks.verify_retry_after && run == runs && !kept.interrupted) {
      if (!audit.unread.empty()) {
        log.retry_verification.emplace();
        log.retry_verification->skip_reason =
            fmt::format("Redis was unreachable after the run: {}", audit.unread);
      } else {
        log.retry_verification = verify_retry_after(*clients.factory, kept, load, run,
                                                    target.longest_retry_wait(evidence.results()),
                                                    announce_wait(config), retried);
        for (const engine::RequestRecord& retry : retried)
          monitor.live().decided_after_run(retry.outcome, retry.error);
      }
    }
    target.clean_up(run, audit, retried, log.keys_left);
    if (clients.counters)
      add_counters(log.counters, clients.counters());
    add_counters(log.counters, others);
    const bool interrupted =
        kept.interrupted || (log.retry_verification && log.retry_verification->interrupted);
    evidence.settle(audit);
    if (interrupted) {
      log.interrupted = true;
      break;
    }
    if (shared != nullptr && shared->lost_any())
      break;  // the runs after a lost worker could not be shared as the test asks
  }

  if (!leader) {
    // Worker 0 reports for everyone; should it be lost, the first worker to take its place
    // judges what was shipped (no faults were applied after it was lost, none are measured).
    RunCounters counters;
    const bool stands_in = judge_in_place_of_lost_leader(
        shared, runs_shipped,
        [&](int run, engine::RunResult merged) {
          engine::RunResult& kept = evidence.keep(run, std::move(merged), {});
          const StateAudit audit = target.audit_state(run, kept.records);
          target.clean_up(run, audit, {}, log.keys_left);
          evidence.settle(audit);
        },
        counters);
    if (!stands_in)
      return {};
    add_counters(log.counters, counters);
  }
  if (search)
    log.find_max = search->result();
  report::Report report = evidence.judge(log);
  if (evidence.judged_contract() &&
      wants_serial_rerun(report, config, target, *evidence.judged_contract())) {
    report.serial_rerun = rerun_serially(target, config, *evidence.judged_contract(), report,
                                         runs + 1, report.keys_left);
    if (report.serial_rerun)
      note_serial_rerun(report, *report.serial_rerun);
  }
  monitor.judged(target.records_name(), report.checks,
                 report.interrupted ? checks::Verdict::interrupted : report.verdict);
  return report;
}

}  // namespace rlcheck::runner
