#pragma once
// A worker thread's share of a run: one libevent loop driving many clients.

#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/ring_queue.hpp"
#include "engine/identity_map.hpp"
#include "engine/run.hpp"

struct event;

namespace rlcheck::engine {

// What the workers of one run share. The only writes after start-up are next_seq, errors and
// stopped (atomic), and start, written once by the barrier's completion step. What a run has
// done so far is counted in each worker's own LiveCell.
struct RunShared {
  using StartLine = std::barrier<std::function<void()>>;

  RunShared(const config::LoadConfig& load_config, int workers, RunObserver* run_observer,
            RecordSink* record_sink = nullptr);

  const config::LoadConfig& load;
  const IdentityMap identities;              // which identity each request speaks for
  std::shared_ptr<const Schedule> schedule;  // when each request is due
  RunObserver* observer;
  RecordSink* sink;  // null: each worker keeps its records
  // The next request number to take (take_seq); with one worker, only its thread writes it.
  std::atomic<uint64_t> next_seq{0};
  const bool sole_worker;
  std::atomic<int64_t> errors{0};    // errored requests so far, counted for stop_after_errors
  std::atomic<bool> stopped{false};  // more than stop_after_errors: no request leaves any more
  bool cancelled = false;  // the start gate said not to start (written before the start line)
  std::chrono::steady_clock::time_point start;
  int64_t start_wall_ns = 0;
  StartLine start_line;

  uint64_t take_seq() {
    if (sole_worker) {
      // Nobody else takes numbers: a plain increment spares the locked add (a full barrier).
      const uint64_t taken = next_seq.load(std::memory_order_relaxed);
      next_seq.store(taken + 1, std::memory_order_relaxed);
      return taken;
    }
    return next_seq.fetch_add(1, std::memory_order_relaxed);
  }
};

class Worker final : public ClientListener {
 public:
  // `live`: this thread's cell of the run's live counts (null: none kept).
  Worker(ClientFactory& factory, RunShared& shared, int first_client_id, int clients,
         LiveCell* live = nullptr);
  ~Worker() override;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // The thread body: connect, wait at the start line, drive requests until none are left.
  void run();

  // Results, read after join.
  RecordLog records;          // empty when a sink takes them
  int index = 0;              // this worker's number among the run's (the sink's)
  uint64_t streamed = 0;      // records handed to the sink
  int64_t last_reply_ns = 0;  // the latest reply a streamed record had
  Histogram latency_ns;
  Histogram lateness_ns;           // the open model on the wall clock: sent - due
  std::vector<StageTally> stages;  // --stages: this worker's share of each stage's figures
  int clients_ready = 0;
  std::string connect_error;
  std::map<ErrorKind, std::string> error_samples;
  std::string hint_sample;    // the first malformed retry hint
  std::string header_sample;  // the first malformed rate-limit header
  bool was_interrupted = false;
  // Requests per node (Decision::node); std::less<> finds a string_view without a copy.
  std::map<std::string, int64_t, std::less<>> by_node;
  // Responses per set of several policies advertised (Decision::policies).
  std::map<std::vector<std::pair<int64_t, int64_t>>, int64_t> policy_sets;

  void on_connected(int slot, bool ok, const std::string& error) override;
  void on_decision(int slot, Decision&& decision) override;

 private:
  struct Slot;
  struct EventFree {
    void operator()(event* e) const;
  };
  using EventPtr = std::unique_ptr<event, EventFree>;

  // `freed_at`: when the reply that freed the slot was read (else the epoch). An unpaced request
  // leaves after it, so that instant is a true lower bound of its send: one clock read saved.
  void launch_next(int slot, std::chrono::steady_clock::time_point freed_at = {});
  void send_when_due(int slot, std::chrono::steady_clock::time_point freed_at = {});
  void send(int slot, std::chrono::steady_clock::time_point freed_at = {});
  void finish_if_idle();
  void keep(const RequestRecord& record);
  // Hands the records kept so far to the sink, with the worker's low water (`finished`: none
  // comes any more).
  void flush_records(bool finished = false);
  int64_t low_water_ns() const;
  void count_error();
  void drop_waiting();
  bool stopping() const;
  int64_t since_start_ns() const;
  void launch_virtual(Slot& slot);
  StageTally* stage_tally(const Slot& slot);
  uint8_t skew_index(const Slot& slot) const;
  static void on_pace_timer(int, short, void* arg);
  // Every request waits the same --timeout, so sends are in deadline order: one timer, armed
  // for the earliest, serves them all, and settling a request costs no timer call.
  struct Deadline {
    std::chrono::steady_clock::time_point at;
    int slot;
    uint64_t seq;
  };
  bool settled(const Deadline& deadline) const;
  void drop_settled_deadlines();
  void arm_deadline_timer();
  static void on_deadline_timer(int, short, void* arg);
  static void on_poll_interrupt(int, short, void* arg);

  ClientFactory& factory_;
  RunShared& shared_;
  LiveCell* live_;
  int first_client_id_;
  std::unique_ptr<event_base, void (*)(event_base*)> base_;
  std::unique_ptr<LoopShared> loop_shared_;  // outlives the clients, not the loop
  std::vector<std::unique_ptr<Slot>> slots_;
  // Per slot, the seq of its request on the wire (sent, not yet decided), else k_off_wire. Apart
  // from the slots: the deadline queue reads the oldest request's entry at every decision, and
  // a slot of its own there would be a cold line each time.
  static constexpr uint64_t k_off_wire = ~uint64_t{0};
  std::vector<uint64_t> wire_seq_;
  bool on_wire(int slot) const { return wire_seq_[static_cast<size_t>(slot)] != k_off_wire; }
  EventPtr interrupt_poll_;
  EventPtr deadline_timer_;
  base::RingQueue<Deadline> deadlines_;  // of the requests on the wire (and some settled), by send
  bool deadline_armed_ = false;
  std::vector<RequestRecord> outgoing_;  // records not yet handed to the sink
  int pending_connects_ = 0;
  Schedule::Cursor due_cursor_;  // the schedule, read mostly in order
  int in_flight_ = 0;            // started or waiting on a pace timer
  bool exhausted_ = false;
};

}  // namespace rlcheck::engine
