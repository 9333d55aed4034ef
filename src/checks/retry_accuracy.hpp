#pragma once
// How true the retry hints were: for every denial that carried one, the wait the contract and
// the admissions seen so far predict, against the wait the limiter told.
//
// The prediction is a range, never a point: an admission happened somewhere between its send
// and its reply, and so did the denial. The admissions surely before the denial (replied before
// it was sent) give the shortest wait, the ones possibly before it (sent before its reply) the
// longest; a hint inside the range has no error, one outside it is early or late by its
// distance to the range. The range already absorbs however long requests queued, so the
// tolerance beyond it is only what the range cannot know: the hint's own resolution (whole
// seconds over HTTP, milliseconds from a script) and the clocks' (hint_tolerance).
//
// A request that errored after it may have reached the limiter (engine::is_unknown) widens the
// range on the long side: the server may have admitted it at any instant after its send, as
// late as just before the denial, so a hint it would explain is never judged late.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

struct HintError {
  uint32_t identity = 0;
  uint64_t seq = 0;
  int64_t denied_at_ns = 0;   // the denial's reply, from the run start
  int64_t hint_ms = 0;        // what the limiter said
  int64_t error_ms = 0;       // hint minus the nearest predicted wait: < 0 early, > 0 late
  int32_t resolution_ms = 1;  // the hint's unit (RequestRecord::hint_resolution_ms)
  int64_t sent_ns = 0;        // the denial's send, from the run start
};

// The errors of every hint judged, kept as a count per error value (an hour-long run judges
// millions of hints; their errors take few distinct values), and the worst in full: the largest
// error either way, and of equals the lowest identity, then the earliest sent, then the lowest
// seq (whatever order they were pushed in).
class HintErrors {
 public:
  HintErrors() = default;
  HintErrors(std::initializer_list<HintError> errors);
  // A copy's cache of the last count starts afresh (it pointed into the other's counts), and
  // so does a moved-from one's.
  HintErrors(const HintErrors& other)
      : size_(other.size_), counts_(other.counts_), worst_(other.worst_) {}
  HintErrors(HintErrors&& other) noexcept
      : size_(other.size_), counts_(std::move(other.counts_)), worst_(other.worst_) {
    other.last_ = other.counts_.end();
  }
  HintErrors& operator=(const HintErrors& other) { return *this = HintErrors(other); }
  HintErrors& operator=(HintErrors&& other) noexcept {
    size_ = other.size_;
    counts_ = std::move(other.counts_);
    last_ = counts_.end();
    other.last_ = other.counts_.end();
    worst_ = other.worst_;
    return *this;
  }
  ~HintErrors() = default;
  void push_back(const HintError& error);
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::map<int64_t, int64_t>& counts() const { return counts_; }  // error_ms -> hints
  const std::optional<HintError>& worst() const { return worst_; }

 private:
  int64_t size_ = 0;
  std::map<int64_t, int64_t> counts_;
  // The count of the last error counted: a run's hints mostly repeat one error.
  std::map<int64_t, int64_t>::iterator last_ = counts_.end();
  std::optional<HintError> worst_;
};

// The error value at rank `n` (0-based, in increasing order) of counts merged from `counts`.
int64_t error_at_rank(const std::map<int64_t, int64_t>& counts, int64_t n);

struct RetryAccuracy {
  HintErrors errors;  // one per denial with a usable hint, by identity then seq
  int64_t early = 0;  // hints early by more than their resolution's early tolerance
  int64_t late = 0;   // hints late by more than their resolution's late tolerance
  // Denials the admissions seen cannot explain (the window held fewer than the limit, the
  // bucket had a token): the limiter counted something else (state from before the run,
  // other clients), so no wait can be predicted and the hint is not judged.
  int64_t unexplained = 0;
  // Hints given to requests costing more than the contract ever holds (--cost): each promises
  // a retry that can never pass. The first, in full.
  int64_t never_admissible = 0;
  std::optional<HintError> never_worst;
  std::vector<int32_t> resolutions;  // of the hints judged, finest first, each once
  // Every usable hint finer than a second (a script's) was a multiple of 1000 ms: what
  // --hint-resolution auto reads over all runs before any is judged.
  bool finer_hints_whole_seconds = true;
  bool judged_as_whole_seconds = false;  // finer hints judged as whole seconds (rejudge)
  // The run's denials with a hint were not all sent on one grid of whole seconds: hints that
  // are whole seconds say something of their unit only then (SecondGrid).
  bool instants_off_second_grid = false;
  bool any() const { return !errors.empty(); }
};

// Whether a run's instants all sat on one grid of whole seconds (a virtual clock at 1/s, a
// schedule of whole seconds): a limiter's millisecond hints, differences of such instants and
// whole windows, are then whole seconds whatever their unit, and prove nothing of it.
class SecondGrid {
 public:
  void add(int64_t at_ns) {
    if (off_)
      return;
    const int64_t phase = ((at_ns % k_second_ns) + k_second_ns) % k_second_ns;
    if (!phase_ns_)
      phase_ns_ = phase;
    else
      off_ = phase != *phase_ns_;
  }
  bool off() const { return off_; }

 private:
  static constexpr int64_t k_second_ns = 1'000'000'000;
  std::optional<int64_t> phase_ns_;  // the first instant's offset within its second
  bool off_ = false;
};

// How far outside the predicted range a hint may be before it is early or late.
struct HintTolerance {
  int32_t resolution_ms = 1000;  // the hints it judges: 1 (milliseconds), 1000 (whole seconds)
  int64_t early_ms = 1000;       // earlier by more: a client that obeys it is denied again
  int64_t late_ms = 1000;        // later by more: clients wait for nothing
};

// The tolerance for hints counted in `resolution_ms` when the window is `window_ms`.
// A hint is the least time to wait (RFC 9110 10.2.3): at every resolution it may be early only
// by what rlcheck cannot measure, 1 ms (the limiter's millisecond step, or the error's
// truncation) plus 1 ms (the limiter reads its millisecond clock twice, for the admission and for
// the denial; the range allows for one of the two) plus 1 ms per 10 s of window (Redis TIME and
// rlcheck's steady clock tick at the same rate on one host, two NTP-disciplined hosts within
// 100 ppm). A limiter that floors to whole seconds is early, not rounded. Late: whole seconds
// (1000 and coarser) by max(one step, 10 % of the window), as servers commonly round up to the
// window's end; finer by one step plus the same clock allowance.
//
// `from_date`: the hint was a timestamp (an epoch reset, an HTTP-date Retry-After) turned into
// a delay against the Date header. The timestamp is rounded either way to its second and the
// Date truncated, so the delay read is less than a second early or two seconds late: one more
// second either way.
HintTolerance hint_tolerance(int32_t resolution_ms, int64_t window_ms, bool from_date = false);

struct AccuracyTolerance {
  int64_t window_ms = 60'000;  // the contract's window: the late share and the clock drift
  // Many hosts: how far two workers' clocks may disagree (rounded up), added on both sides.
  int64_t clock_ms = 0;
  HintTolerance at(int32_t resolution_ms, bool from_date = false) const {
    HintTolerance tolerance = hint_tolerance(resolution_ms, window_ms, from_date);
    tolerance.early_ms += clock_ms;
    tolerance.late_ms += clock_ms;
    return tolerance;
  }
};

// The hint of a denial in milliseconds: the limiter's retry_ms (Retry-After), else an
// advertised reset (RateLimit t); none when the denial carried neither or a malformed one.
std::optional<int64_t> usable_hint_ms(const engine::RequestRecord& record);
// Whether that hint was read against the Date header (hint_tolerance's `from_date`).
bool usable_hint_from_date(const engine::RequestRecord& record);

// Judges the hints finer than a second of `accuracy` again as whole seconds: early and late
// recounted from the errors at the whole-second tolerance (--hint-resolution 1s, or auto when
// every hint of the test was a multiple of 1000 ms). Nothing when none was finer.
void judge_as_whole_seconds(RetryAccuracy& accuracy, const AccuracyTolerance& tolerance);

// The wait a denial's hint is held to: from low to high; not explained when the admissions
// seen leave room, yet it was denied (its hint is then not judged).
struct HintRange {
  double low_ns = 0;
  double high_ns = 0;
  bool explained = true;
  // The request costs more than the contract ever holds: it can never pass, whatever the wait.
  bool never = false;
};

// The range widened by the limiter's clock tolerance (never below 0).
HintRange widen_by_clock(HintRange range, int64_t clock_ns);
// fixed: the slot frees when the window the denial fell in ends.
HintRange fixed_hint_range(const engine::RequestRecord& denial, const AdmissionRule& rule,
                           int64_t start_wall_ns);
// A token bucket's level right after an admission taken at `at_ns`.
struct BucketLevel {
  double tokens = 0;
  int64_t at_ns = 0;
};
// The wait for one token from `now_ns`, the bucket `after` an admission (nullopt: none taken
// yet, full), with `taken` more taken right at `now_ns`. The admission may come after
// `now_ns` (replayed at its reply, the denial at its send): its level less the refill between.
double bucket_wait_ns(const std::optional<BucketLevel>& after, int64_t now_ns,
                      const AdmissionRule& rule, size_t taken = 0);
// Judges a denial's usable hint against `range` (already widened): its error, early or late.
void judge_hint(RetryAccuracy& accuracy, const engine::RequestRecord& denial, uint32_t identity,
                const HintRange& range, const AccuracyTolerance& tolerance);

// Fixed windows must already carry their index (assign_wall_windows); `start_wall_ns` places
// the run on the wall clock, where fixed windows end.
// The predicted wait of every denial of `judged` that carried a usable hint, by key (identity
// or group) in send order, against the admissions of `used` (the same keys: the same records,
// or with denials read as admissions): the ranges of one part of several contracts.
using HintRangeVisitor =
    std::function<void(const engine::RequestRecord& denial, const HintRange& range)>;
void visit_hint_ranges(const IdentityRecords& judged, const IdentityRecords& used,
                       const AdmissionRule& rule, int64_t start_wall_ns,
                       const HintRangeVisitor& visit);

RetryAccuracy measure_retry_accuracy(const IdentityRecords& identities, const AdmissionRule& rule,
                                     int64_t start_wall_ns, const AccuracyTolerance& tolerance);

}  // namespace rlcheck::checks
