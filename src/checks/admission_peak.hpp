#pragma once
// The most admissions a run packed into what the limiter promises to bound, measured so a
// failure is never a measurement artefact: an admission happened somewhere between its send
// and its reply, and every span is stretched to the longest it could really have been.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/record_log.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::checks {

// What the limiter promises.
struct AdmissionRule {
  enum class Kind {
    sliding,  // at most `limit` in any span shorter than `window_ns`
    fixed,    // at most `limit` per aligned window (records carry the window index)
    // at most `limit` per window of `window_ns` that opens at the first admission after the
    // previous one ended (INCR + EXPIRE on the first hit); hints name its end
    first_hit,
    bucket,  // at most `burst + rate * d` in any span of length d (token bucket, GCRA)
    // two fixed windows of `window_ns` weighted: admits while prev x (1 - f) + curr < `limit`
    // (checks/sliding_counter.hpp)
    sliding_counter,
  };
  Kind kind = Kind::sliding;
  int64_t limit = 0;      // sliding, fixed
  int64_t window_ns = 0;  // sliding
  int64_t burst = 0;      // bucket
  // What one instant admits at most: the burst of a bucket, else the limit.
  int64_t capacity() const { return kind == Kind::bucket ? burst : limit; }
  double tokens_per_ns = 0;  // bucket
  // How coarsely the limiter may read its clock (Redis scripts commonly keep milliseconds):
  // admissions this close to a window apart, or to a fixed window's boundary, are not held
  // against it.
  int64_t clock_ns = 0;
  // first_hit: the limiter surely started the run with no window open (a fresh key, --reset,
  // --exact). Otherwise a window may have opened up to a window before the run, and its phase
  // carries through every later window.
  bool fresh_state = true;
  // sliding_counter: the windows start at the first admission (and again after both emptied)
  // instead of on the limiter's clock.
  bool first_hit_anchor = false;
  // sliding_counter on the clock: the run start on the limiter's wall clock (ns since the epoch).
  int64_t start_wall_ns = 0;
  // bucket, --refill K/I,steps: `step_tokens` (K) at each tick, `step_ns` (I) apart, none
  // between; 0: a smooth refill at tokens_per_ns (K / I either way). Judged through the smooth
  // buckets that bracket it (checks/stepped_bucket.hpp), and where --anchor places the ticks
  // through them too.
  int64_t step_tokens = 0;
  int64_t step_ns = 0;
  enum class Ticks {
    anywhere,   // the ticks' phase is not known
    clock,      // at multiples of step_ns on the limiter's clock (start_wall_ns places them)
    first_hit,  // at the bucket's creation (its first admission's arrival) plus whole steps
  };
  Ticks ticks = Ticks::anywhere;
  bool stepped() const { return kind == Kind::bucket && step_ns > 0 && step_tokens > 0; }
};

// The rule for a --contract name (sliding, fixed, sliding-counter, token-bucket, gcra); nullopt
// for others.
std::optional<AdmissionRule::Kind> contract_kind(std::string_view name);
// token-bucket, gcra and queue (a bucket of B + 1 to its arrivals): contracts that count tokens,
// not windows.
bool bucket_contract(std::string_view name);
// The rule for a --contract name and its --anchor ("clock", "first-hit"; empty: clock).
std::optional<AdmissionRule::Kind> contract_kind(std::string_view name, std::string_view anchor);

struct AdmissionPeak {
  int64_t count = 0;      // admissions in the worst span
  double allowance = 0;   // what the rule allows in that span
  int64_t start_ns = 0;   // the span's first send, from the run start
  int64_t length_ns = 0;  // the span's longest possible length
  double excess() const { return static_cast<double>(count) - allowance; }
  bool exceeded() const { return excess() > 1e-9; }
};

// The worst span: the one with the largest count - allowance (ties: the largest count; fixed
// windows equal in count: the one whose first admission was sent first, then the lowest index).
// It does not depend on the order of `records`.
AdmissionPeak find_admission_peak(engine::RecordView records, const AdmissionRule& rule);

}  // namespace rlcheck::checks
