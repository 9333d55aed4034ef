#include "runner/run_loop.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "engine/request_clock.hpp"
#include "faults/fault_schedule.hpp"
#include "judging/evidence.hpp"
#include "judging/judgement.hpp"
#include "runner/clock_watch.hpp"
#include "runner/find_max.hpp"
#include "runner/retry_verification.hpp"
#include "runner/serial_rerun.hpp"
#include "runner/shared_test.hpp"
#include "runner/stream_run.hpp"

namespace rlcheck::runner {
namespace {

// What --fault acts on, once checked that every fault can: restart@ needs the private
// redis-server (else usage), failover@ a cluster whose masters have replicas (else
// cannot_test).
faults::FaultedRedis vetted_faulted_redis(Target& target, const config::Config& config) {
  faults::FaultedRedis faulted_redis = target.faulted_redis();
  const std::vector<config::FaultSpec>& faults = config.faults.faults;
  if (faults.empty())
    return faulted_redis;
  if (auto refusal = faults::restart_refusal(faulted_redis, faults))
    throw base::usage_error(*refusal);
  if (auto supported = faults::check_failover_support(faulted_redis, faults); !supported)
    throw base::cannot_test(supported.error());
  return faulted_redis;
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

// The target, once it prepared what the test needs of it (after the faults were vetted).
Target& prepared(Target& target) {
  target.prepare_test();
  return target;
}

// One test's runs in sequence, for run_test: each run prepared, sent (alone or as this worker's
// share), recorded and kept, the state it left read, the last run's hint verified, clean-up.
class TestRuns {
 public:
  TestRuns(Target& target, const config::Config& config, const RunOutputs& outputs)
      : target_(target),
        config_(config),
        outputs_(outputs),
        session_(outputs.session),
        leader_(session_ == nullptr || session_->leader()),
        fault_applier_(vetted_faulted_redis(target, config)),
        evidence_(prepared(target), config, session_),
        load_(config.load),
        monitor_(outputs.monitor != nullptr ? *outputs.monitor
                                            : own_monitor_.emplace(config, /*serve=*/false)) {
    // Errors above --max-errors already decide the test: a run stops sending once it has them.
    // With --fault, errors are what the test provokes, and what follows them (recovery) is
    // measured: the run goes on to its end.
    if (config.faults.faults.empty())
      load_.stop_after_errors = config.checks.max_errors;
    if (config.find_max.enabled) {  // --find-max: each run is a step of the search
      const config::Rate& start = *config.load.rate;
      search_.emplace(
          config.find_max,
          static_cast<double>(start.tokens) * 1e9 / static_cast<double>(start.period.count()),
          config.checks.max_errors);
    }
  }

  // Every run, until the last, Ctrl-C, or a lost worker.
  void run_all() {
    for (int run = 1; search_ ? search_->next_rate().has_value() : run <= config_.load.runs;
         ++run) {
      if (!run_one(run))
        break;
    }
  }

  // Many hosts, a worker that did not lead: whether it takes the place of a lost worker 0
  // (then judge() reports for everyone).
  bool stands_in() {
    RunCounters counters;
    const bool stands_in = judge_in_place_of_lost_leader(
        session_, runs_shipped_,
        [&](int run, engine::RunResult merged) {
          engine::RunResult& kept = evidence_.keep(run, std::move(merged), {});
          const StateAudit audit = target_.audit_state(run, kept.records);
          target_.clean_up(run, audit, {}, log_.keys_left);
          evidence_.settle(audit);
        },
        counters);
    add_counters(log_.counters, counters);
    return stands_in;
  }

  bool leader() const { return leader_; }

  // The runs judged, a burst's over-admission asked again one request at a time.
  report::Report judge() {
    if (search_)
      log_.find_max = search_->result();
    report::Report report = evidence_.judge(log_);
    if (evidence_.judged_contract() &&
        wants_serial_rerun(report, config_, target_, *evidence_.judged_contract())) {
      report.serial_rerun = rerun_serially(target_, config_, *evidence_.judged_contract(), report,
                                           config_.load.runs + 1, report.keys_left);
      if (report.serial_rerun)
        note_serial_rerun(report, *report.serial_rerun);
    }
    monitor_.judged(target_.records_name(), report.checks,
                    report.interrupted ? checks::Verdict::interrupted : report.verdict);
    return report;
  }

 private:
  // What one run sent, as the engine and the faults left it.
  struct Sent {
    engine::RunResult result;
    std::vector<checks::FaultWindow> fault_windows;
    std::optional<checks::StreamAudit> streamed;  // --audit stream: the run's audit
    RunCounters others;                           // worker 0: the other workers' counts
  };

  // Run `run`; false when the test ends with it (or before it).
  bool run_one(int run) {
    if (search_)
      load_ = search_->next_load(load_);
    if (!target_.prepare_run(run, leader_)) {
      log_.interrupted = true;
      return false;
    }
    if (load_.virtual_clock && run > 1)
      load_.virtual_origin_ns = next_virtual_origin(run);
    const StateChoice state = target_.run_state(run);
    load_.schedule_seed = schedule_seed(config_, state, run);
    const RunClients clients = target_.clients(state, load_);
    Sent sent = send(run, clients);
    if (!leader_)
      return !shared_runs_end(sent.result, *session_, runs_shipped_);
    if (sent.result.cancelled)
      return false;  // a worker was lost before the run could start
    // Nothing measured yet: the test could not start. Once a run has, a later run without a
    // connection is reported with the others (its requests are errors).
    if (run == 1 && !sent.result.interrupted) {
      if (const auto why = no_connection(sent.result, sent.streamed ? &*sent.streamed : nullptr)) {
        throw base::cannot_test(
            fmt::format("no connection to {} became ready: {}", target_.address(), *why));
      }
    }
    if (search_ && !sent.result.interrupted)
      search_->observe(count_step(sent.result, static_cast<uint64_t>(clients.load.requests),
                                  static_cast<uint64_t>(clients.load.concurrency)));
    write_records(run, sent.result, clients.load);
    virtual_end_ns_ = sent.result.start_wall_ns + sent.result.duration_ns;
    return settle(run, clients, std::move(sent));
  }

  // The run on the engine, with its faults, progress, streamed audit and clock watch.
  Sent send(int run, const RunClients& clients) {
    Sent sent;
    faults::FaultSchedule fault_schedule(
        leader_ ? config_.faults.faults : std::vector<config::FaultSpec>{}, fault_applier_,
        clients.failover_key, outputs_.observer);
    const std::string label =
        search_ ? fmt::format("{} at {}/s", target_.run_label(run, run), *search_->next_rate())
                : target_.run_label(run, config_.load.runs);
    engine::RunHooks hooks =
        monitor_.begin_run(target_.records_name(), run, label, clients.load, &fault_schedule);
    std::optional<StreamRun> stream;
    if (const checks::AuditParams* audit = evidence_.stream_audit(); audit != nullptr) {
      report::RunContext context;
      context.first_seq = clients.load.first_seq;
      stream.emplace(*audit, outputs_.records, target_.records_name(), run, context);
      hooks.sink = &stream->sink();
    }
    ClockWatch clock_watch(target_, !clients.load.virtual_clock);
    hooks.tick = [&clock_watch, lag = std::move(hooks.tick)] {
      clock_watch.sample();
      if (lag)
        lag();  // the monitor's watch on the schedule
    };
    sent.result = execute_shared_run(session_, run, *clients.factory, clients.load, hooks,
                                     clients.counters, sent.others);
    sent.result.limiter_clock = clock_watch.finish();
    if (clients.finish)
      clients.finish(sent.result);
    monitor_.end_run();
    sent.fault_windows = fault_schedule.finish();
    if (stream)
      sent.streamed.emplace(stream->take_audit());
    return sent;
  }

  // --records: the run's requests (a streamed run wrote its own as they came).
  void write_records(int run, const engine::RunResult& result, const config::LoadConfig& load) {
    if (outputs_.records == nullptr || result.streamed)
      return;
    report::RunContext context;
    context.start_wall_ns = result.start_wall_ns;
    context.schedule = result.schedule.get();
    context.first_seq = load.first_seq;
    context.virtual_clock = result.virtual_clock;
    context.share_count =
        config_.workers.distributed() ? static_cast<uint64_t>(config_.workers.count) : 1;
    outputs_.records->write_run(target_.records_name(), run, result.records, context);
  }

  // The run kept, the state it left read, the last run's hint verified, clean-up; false when
  // the test ends with it.
  bool settle(int run, const RunClients& clients, Sent sent) {
    engine::RecordLog touched;  // streamed: what the run's records touched
    engine::RunResult* kept_result = nullptr;
    if (sent.streamed) {
      touched = sent.streamed->touched();
      kept_result =
          &evidence_.keep_streamed(run, std::move(sent.result), std::move(*sent.streamed));
    } else {
      kept_result = &evidence_.keep(run, std::move(sent.result), std::move(sent.fault_windows));
    }
    engine::RunResult& kept = *kept_result;
    const StateAudit audit = target_.audit_state(
        run, evidence_.stream_audit() != nullptr ? touched.view() : kept.records.view());
    std::vector<engine::RequestRecord> retried;
    if (config_.checks.verify_retry_after && run == config_.load.runs && !kept.interrupted)
      verify_last_hint(run, clients, kept, audit, retried);
    target_.clean_up(run, audit, retried, log_.keys_left);
    if (clients.counters)
      add_counters(log_.counters, clients.counters());
    add_counters(log_.counters, sent.others);
    const bool interrupted =
        kept.interrupted || (log_.retry_verification && log_.retry_verification->interrupted);
    evidence_.settle(audit);
    if (interrupted) {
      log_.interrupted = true;
      return false;
    }
    // The runs after a lost worker could not be shared as the test asks.
    return session_ == nullptr || !session_->lost_any();
  }

  // --verify-retry-after: a denied identity waits what it was told and retries once.
  void verify_last_hint(int run, const RunClients& clients, const engine::RunResult& kept,
                        const StateAudit& audit, std::vector<engine::RequestRecord>& retried) {
    if (!audit.unread.empty()) {
      log_.retry_verification.emplace();
      log_.retry_verification->skip_reason =
          fmt::format("the limiter's state could not be read after the run: {}", audit.unread);
      return;
    }
    log_.retry_verification = verify_retry_after(*clients.factory, kept, load_, run,
                                                 target_.longest_retry_wait(evidence_.results()),
                                                 judging::announce_wait(config_), retried);
    for (const engine::RequestRecord& retry : retried)
      monitor_.live().decided_after_run(retry.outcome, retry.error);
  }

  // A virtual run starts where the last one ended (plus the target's pause between runs, which
  // costs nothing on the virtual clock), or at the wall clock if that is later: the limiter's
  // clock never goes back.
  int64_t next_virtual_origin(int run) const {
    const int64_t after_last = virtual_end_ns_ + target_.pause_before_run(run).count() + 1'000'000;
    return engine::next_whole_ms(std::max(engine::wall_now_ns(), after_last));
  }

  Target& target_;
  const config::Config& config_;
  const RunOutputs& outputs_;
  coord::Session* session_;
  // Many hosts: worker 0 prepares, merges and judges; the others only send their share.
  bool leader_;
  faults::FaultApplier fault_applier_;
  judging::Evidence evidence_;
  config::LoadConfig load_;
  std::optional<observe::Monitor> own_monitor_;
  observe::Monitor& monitor_;
  judging::TestLog log_;
  std::optional<FindMaxSearch> search_;
  int64_t virtual_end_ns_ = 0;  // --virtual-clock: where the last run's virtual time ended
  int runs_shipped_ = 0;        // many hosts: the runs this worker sent its share of
};

}  // namespace

report::Report run_test(Target& target, const config::Config& config, const RunOutputs& outputs) {
  TestRuns runs(target, config, outputs);
  runs.run_all();
  // Worker 0 reports for everyone; should it be lost, the first worker to take its place
  // judges what was shipped (no faults were applied after it was lost, none are measured).
  if (!runs.leader() && !runs.stands_in())
    return {};
  return runs.judge();
}

}  // namespace rlcheck::runner
