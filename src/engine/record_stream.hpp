#pragma once
// Records handed on as a run makes them, instead of kept: what bounds a soak's memory. Workers
// pass their records in small batches to a RecordSink, each with its low water: the earliest
// send any record it has still to hand over can have. The Sequencer puts the records in send
// order (what the streaming audits need) once every worker's low water has passed them, and
// hands them to its consumer, so it holds only the records of the requests completed while an
// earlier one is still in flight (at most the requests of one timeout).

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "engine/request_record.hpp"
#include "engine/schedule.hpp"

namespace rlcheck::engine {

// Takes a run's records while it lasts (RunHooks::sink). Called from every worker thread.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Once, when the start line is crossed (before any record): the start line on the wall
  // clock (RunResult::start_wall_ns), the run's schedule (it outlives the run) and how many
  // workers will hand records over (numbered from 0).
  virtual void begin(int64_t start_wall_ns, const Schedule* schedule, int workers) = 0;
  // Some records of worker `worker` (perhaps none), and its low water: every record it hands
  // over later was sent at or after `low_water_ns` (INT64_MAX: it has finished).
  virtual void take(int worker, std::span<const RequestRecord> records, int64_t low_water_ns) = 0;
  // Every worker has finished: nothing more comes.
  virtual void finish() = 0;
};

// What a Sequencer releases to: called with its lock held, so one call at a time.
class RecordConsumer {
 public:
  virtual ~RecordConsumer() = default;
  virtual void begin(int64_t start_wall_ns, const Schedule* schedule) = 0;
  // Records in (sent, replied) order, continuing the previous call's.
  virtual void consume(std::span<const RequestRecord> records) = 0;
};

class Sequencer final : public RecordSink {
 public:
  explicit Sequencer(RecordConsumer& consumer) : consumer_(consumer) {}

  void begin(int64_t start_wall_ns, const Schedule* schedule, int workers) override;
  void take(int worker, std::span<const RequestRecord> records, int64_t low_water_ns) override;
  void finish() override;

  // Records that came after one sent later had been released (a worker's low water was
  // wrong; their order is then lost).
  uint64_t late() const;
  // The most records held at once.
  size_t most_held() const;

 private:
  void release_before(int64_t sent_ns);

  RecordConsumer& consumer_;
  mutable std::mutex mutex_;
  std::vector<int64_t> low_water_;   // each worker's, as it last said
  std::vector<RequestRecord> held_;  // a min-heap by (sent, replied)
  std::vector<RequestRecord> batch_;
  int64_t released_sent_ns_ = INT64_MIN;  // the last released record's send and reply
  int64_t released_replied_ns_ = INT64_MIN;
  uint64_t late_ = 0;
  size_t most_held_ = 0;
};

}  // namespace rlcheck::engine
