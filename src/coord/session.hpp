#pragma once
// One worker's place in a test shared by many hosts (--workers N): N copies of one command
// line meet on a Redis (the coordinator) under rlcheck:session:<ID>:, and every key they write
// there expires on its own. A session joins (all N, within the join timeout, running the same
// test), measures this host's clock against the coordinator's TIME, agrees on each run's start
// instant on that clock, ships each run's records, and ends with the report worker 0 publishes.
// A heartbeat key per worker tells the others it is alive: one that expires is a worker lost.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "coord/clock_offset.hpp"
#include "engine/run.hpp"
#include "redis/endpoint.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::coord {

using Clock = std::chrono::steady_clock;

struct WorkerInfo {
  int index = 0;
  std::string host;
  int64_t requests = 0;              // records it shipped over every run
  int64_t clock_offset_ns = 0;       // the coordinator's clock minus its wall clock
  int64_t clock_uncertainty_ns = 0;  // the offset is right to within this
  bool lost = false;                 // it stopped answering (its heartbeat expired)
  int lost_in_run = 0;               // the run it was lost in (0: between runs)
};

struct SessionOptions {
  int workers = 1;
  int index = 0;
  redis::Endpoint coordinator;
  std::string id;
  config::Nanos join_timeout = std::chrono::seconds(60);
  config::Nanos timeout = std::chrono::seconds(5);  // each coordinator command
  std::string host;                                 // this worker's host name, for the report
  // The test every worker must run alike, one "name=value" per line (requests, concurrency,
  // runs, limit, target...): a worker that differs is named, with the first difference.
  std::string fingerprint;
};

struct SessionError {
  bool usage = false;  // the command line is at fault (exit 64); else the session could not be
  std::string message;
};

class Session {
 public:
  using Say = std::function<void(const std::string&)>;

  // Connects to the coordinator, measures the clock, joins as options.index and waits until
  // every worker has joined (or the join timeout: the error names the missing indices).
  static std::expected<std::unique_ptr<Session>, SessionError> join(const SessionOptions& options,
                                                                    const Say& say);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int index() const { return options_.index; }
  int workers() const { return options_.workers; }
  bool leader() const { return options_.index == 0; }
  const std::string& id() const { return options_.id; }
  // Every worker's, by index (requests filled by merge_run, lost marks by the heartbeat).
  std::vector<WorkerInfo> worker_info() const;
  // How far apart two workers' clocks may be: the sum of the two largest uncertainties.
  int64_t clock_uncertainty_ns() const;
  // Set when a worker was lost or one was interrupted: runs stop sending (LoadConfig::abandon).
  const std::atomic<bool>* abandon_flag() const { return &abandon_; }
  bool lost_any() const;
  // "worker 2 (host-b) stopped answering during run 1", one per lost worker.
  std::string lost_description() const;

  // The start gate of run `run`: says this worker is ready, waits for all, and returns the
  // agreed instant on this host's steady clock (aligned to a window boundary of the
  // coordinator's clock with --start-before-boundary). nullopt: the session ended instead (a
  // worker was lost, or the report is out).
  std::optional<Clock::time_point> agree_start(int run, const config::LoadConfig& load);

  // Ships `result` (this worker's share of run `run`), its instants moved onto the agreed start.
  // Every worker ships, worker 0 too: should it be lost, another merges what it shipped.
  std::expected<void, std::string> ship(int run, const engine::RunResult& result,
                                        const std::map<std::string, uint64_t>& counters);
  // Every worker's shipment of run `run`, merged on the common clock (start: the agreed
  // instant); waits for each until it shipped or was lost (then marked lost and left out).
  // `counters` sums the shipped counters, this worker's own only with `own_counters`.
  std::expected<engine::RunResult, std::string> merge_shipped(
      int run, std::map<std::string, uint64_t>& counters, bool own_counters);

  // A worker other than 0, after its runs: waits until worker 0 published the report (false),
  // or was lost (true when this worker is the first to claim its place: it then merges what
  // was shipped and publishes, and publishes() is true).
  bool take_over_from_lost_leader();
  // Whether this worker publishes the report: worker 0, or the one that took its place.
  bool publishes() const { return leader() || stood_in_; }
  // The worker that merged and judged: 0, unless another took over from it.
  int merged_by() const { return stood_in_ ? options_.index : 0; }

  // Worker 0: the outputs every worker prints. Others: wait for them (error: worker 0 was lost,
  // or Ctrl-C).
  std::expected<void, std::string> publish(const std::string& outputs);
  std::expected<std::string, std::string> await_outputs();

 private:
  explicit Session(const SessionOptions& options);
  std::expected<void, SessionError> connect_and_join(const Say& say);
  std::expected<void, SessionError> wait_for_everyone();
  // After a failed join; `forget`: this worker's keys go, so the session can be tried again.
  void leave(bool forget);
  void start_heartbeat();
  void heartbeat_loop();
  void mark_lost(int worker, int run);
  bool is_lost(int worker) const;
  std::string key(const std::string& suffix) const;
  int64_t coordinator_now_ns() const;
  std::expected<std::vector<std::optional<std::string>>, std::string> get_all(
      const std::string& suffix_of_worker);  // "...:{}" with the index
  std::expected<std::optional<std::string>, std::string> get(const std::string& key);
  std::expected<void, std::string> set(const std::string& key, std::string_view value);
  // Who claimed worker 0's place (nullopt: nobody yet, or the coordinator did not answer).
  std::optional<int> stand_in();

  SessionOptions options_;
  std::optional<redis::SyncClient> control_;
  ClockEstimate clock_;
  std::vector<WorkerInfo> info_;
  mutable std::mutex info_mutex_;  // info_'s lost marks come from the heartbeat thread
  std::atomic<int> current_run_{0};
  std::atomic<bool> abandon_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> everyone_joined_{false};  // from then on, a missing heartbeat is a lost worker
  std::jthread heartbeat_;
  // Each run's agreed start, on this host's steady clock and on the coordinator's (epoch ns):
  // shipping moves records onto it, and a merge (a stand-in's, after the runs) starts there.
  struct AgreedStart {
    Clock::time_point steady;
    int64_t coordinator_ns = 0;
  };
  std::map<int, AgreedStart> agreed_by_run_;
  bool stood_in_ = false;  // worker 0 was lost, and this worker merges in its place
};

}  // namespace rlcheck::coord
