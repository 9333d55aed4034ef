#pragma once
// rlcheck redis --release-script FILE --hold DUR: a Redis semaphore's places given back. Each
// admission's release (the release script, called with the keys and arguments the acquire
// script got for the same request) leaves DUR after the admission's reply, on a timer of the
// loop that carried the request: no thread and no client waits for it, so the clients go on
// sending while leases are held. The loop runs on after its last request until every release
// it owes has been answered (settle), so the run's keys are cleaned up only after them.
//
// A release unanswered within the run's --timeout counts as failed (its late reply is dropped),
// so a Redis that stops answering cannot hold the run for ever.
//
// What each release came to is logged for the audit: a lease was held from its acquire (between
// the request's send and reply) to its release (before the release's reply), so the concurrency
// audit reads an admission as in progress up to its release's reply; a release that failed (an
// error reply, a lost connection) may hold its place for ever (until the script's own expiry).

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/client_rng.hpp"
#include "redis/connection.hpp"
#include "redis/strategy.hpp"

struct event;

namespace rlcheck::redis {

class NodePool;
struct RunTarget;

// One admission's release as it ended.
struct LeaseEnd {
  uint64_t seq = 0;  // the admission's request number
  // When the release's reply was read; unset when none came (an error reply, a lost
  // connection, no connection to send it on, or the run interrupted first).
  std::optional<std::chrono::steady_clock::time_point> released;
};

// Every loop's releases of one run, gathered as each loop settles (the only writes, under a
// lock, once per loop).
class LeaseLog {
 public:
  void add(std::vector<LeaseEnd> ends, uint64_t failed, const std::string& first_error);
  // Read after the run's threads joined.
  std::vector<LeaseEnd> take_ends();
  uint64_t released() const { return released_; }
  uint64_t failed() const { return failed_; }
  const std::string& first_error() const { return first_error_; }

 private:
  std::mutex mutex_;
  std::vector<LeaseEnd> ends_;
  uint64_t released_ = 0;
  uint64_t failed_ = 0;
  std::string first_error_;
};

// The releases one event loop owes. Made by the loop's NodePool when the run has a release
// strategy; destroyed before the pool's connections.
class LeaseReleases final : private ReplySink {
 public:
  LeaseReleases(NodePool& pool, RunTarget& target);
  ~LeaseReleases() override;
  LeaseReleases(const LeaseReleases&) = delete;
  LeaseReleases& operator=(const LeaseReleases&) = delete;

  // Request `state.seq` was admitted just now on connection `index`: its release leaves after
  // the run's hold.
  void hold(const RequestState& state, int index);
  // After the loop's last request: runs the loop until every release is answered (or the run
  // is interrupted), then hands what they came to to the run's LeaseLog.
  void settle();

 private:
  struct Lease;
  static void on_hold_over(int, short, void* lease);
  void release(Lease& lease);
  void send(Lease& lease);
  void on_reply(uint64_t tag, ReplyPtr reply, const std::string& lost_why) override;
  void end(uint64_t id, std::optional<std::chrono::steady_clock::time_point> released,
           std::string error);

  NodePool& pool_;
  RunTarget& target_;
  engine::ClientRng rng_;  // {uuid} in a release's arguments
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Lease>> leases_;  // held or being released
  std::vector<LeaseEnd> ends_;
  uint64_t failed_ = 0;
  std::string first_error_;
  bool settling_ = false;
};

}  // namespace rlcheck::redis
