#pragma once
// --records FILE: every request of every run, one line each, as load tools export them
// (vegeta's encode, k6's JSON output): JSON lines, or CSV when the file name ends in ".csv".
// Written a run at a time, straight from the run's records, so a run of millions of requests
// never becomes one string.
//
// Fields, in this order: [target,] run, seq, identity, send_us, reply_us, outcome, status,
// error_kind, retry_ms, [skew_ms,] due_us, wall_ms, worker.
//  - target: only in `compare` (the strategy or the URL each line belongs to);
//  - run: 1-based; seq: the request's 0-based number within the run; identity: seq mod K;
//  - send_us, reply_us: microseconds from the run's start line; absent (CSV: empty) for a
//    request no connection took (error_kind not-sent), which was never sent;
//  - outcome: allowed, denied, error; status: the HTTP status (absent for Redis and when no
//    response came); error_kind: as the reports' error_kinds (timeout, refused, status-503...),
//    absent unless the outcome is error; retry_ms: the retry hint, when the reply gave one;
//  - skew_ms: only with --clock-skew, how far the clock that sent the request was off (whole
//    ms), a column of every line;
//  - due_us: microseconds from the start line at which the request was due (the open model's
//    schedule, or --interval's); absent for the unpaced closed model; on the virtual clock, the
//    request's virtual instant (send_us);
//  - wall_ms: the send as Unix milliseconds (virtual ones on the virtual clock); absent for a
//    request never sent;
//  - worker: many hosts (--workers N), the worker that sent it (seq mod N); 0 alone.
// CSV has a header line; absent fields are empty cells; text cells are quoted when needed.
// Lines are in seq order within a run.

#include <expected>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/record_log.hpp"
#include "engine/request_record.hpp"
#include "engine/schedule.hpp"
#include "report/report_file.hpp"

namespace rlcheck::report {

// What the fields derived at write time need of a run.
struct RunContext {
  int64_t start_wall_ns = 0;                   // the start line, Unix ns (RunResult's)
  const engine::Schedule* schedule = nullptr;  // when requests were due; null: no due_us
  uint64_t first_seq = 0;                      // the run's first request number
  bool virtual_clock = false;                  // due_us is the virtual instant sent
  uint64_t share_count = 1;                    // many hosts: the workers sharing the run
};

class RecordsWriter {
 public:
  enum class Format { jsonl, csv };

  // csv when `path` ends in ".csv" (any case), else jsonl.
  static Format format_for(std::string_view path);

  // Writes to `out`, which must outlive the writer; the CSV header goes out now. `skews_ms`:
  // --clock-skew's offsets, that records' clock_skew indexes (empty: no skew_ms field).
  // `with_cost`: the CSV has a cost column (--cost); JSON lines carry a cost other than 1
  // either way.
  RecordsWriter(std::ostream& out, Format format, bool with_target,
                std::vector<int64_t> skews_ms = {}, bool with_cost = false);

  // Writes to a temporary file beside `path` that finish() renames over it (report_file.hpp):
  // `path` is untouched until then. The error is "cannot write PATH: why".
  static std::expected<std::unique_ptr<RecordsWriter>, std::string> open_file(
      const std::string& path, bool with_target, std::vector<int64_t> skews_ms = {},
      bool with_cost = false);

  // Appends every record of one run.
  void write_run(std::string_view target, int run, engine::RecordView records,
                 const RunContext& context = {});

  // Flushes (and, for open_file, puts the file in place); false when some write failed (a
  // full disk), now or before.
  bool finish();

 private:
  std::unique_ptr<StagedFile> file_;  // set by open_file: the file the writer owns
  std::ostream* out_;
  Format format_;
  bool with_target_;
  std::vector<int64_t> skews_ms_;
  bool with_cost_;
};

}  // namespace rlcheck::report
