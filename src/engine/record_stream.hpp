#pragma once
// Records handed on as a run makes them, instead of kept: what bounds a soak's memory. Workers
// pass their records in small batches to a RecordSink; the Sequencer puts them in send order
// (what the streaming audits need) once no request sent earlier can still be outstanding, and
// hands them to its consumer, so it holds only the records of the last timeout or so.

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
  // clock (RunResult::start_wall_ns), and the run's schedule (it outlives the run).
  virtual void begin(int64_t start_wall_ns, const Schedule* schedule) = 0;
  // Some records of one worker, in the order it made them.
  virtual void take(std::span<const RequestRecord> records) = 0;
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
  // `horizon_ns`: a record is released once a record sent this much later has come in. A
  // request's record comes at most its timeout (and a worker's flush) after its send, so a
  // horizon longer than that releases every record after all that were sent before it.
  Sequencer(RecordConsumer& consumer, int64_t horizon_ns);

  void begin(int64_t start_wall_ns, const Schedule* schedule) override;
  void take(std::span<const RequestRecord> records) override;
  void finish() override;

  // Records that came after one sent later had been released (their order is then lost).
  uint64_t late() const;
  // The most records held at once.
  size_t most_held() const;

 private:
  void release_before(int64_t sent_ns);

  RecordConsumer& consumer_;
  const int64_t horizon_ns_;
  mutable std::mutex mutex_;
  std::vector<RequestRecord> held_;  // a min-heap by (sent, replied)
  std::vector<RequestRecord> batch_;
  int64_t newest_sent_ns_ = INT64_MIN;
  int64_t released_sent_ns_ = INT64_MIN;  // the last released record's send and reply
  int64_t released_replied_ns_ = INT64_MIN;
  uint64_t late_ = 0;
  size_t most_held_ = 0;
};

}  // namespace rlcheck::engine
