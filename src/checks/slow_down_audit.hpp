#pragma once
// A slow-down (express-slow-down, a delay that grows with the count): past N requests in a
// window of W, the k-th request of the window is answered (k - N) x D later than it would be
// unloaded, up to a longest delay. Nothing is denied. Each request's position in its window is
// known only within bounds, from the instants rlcheck has:
// - at most: every request that may have reached the limiter within W before it, whatever the
//   window's kind (a sliding count over W, each arrival placed anywhere between its send and its
//   reply, errors that may have reached the limiter included). A request that waited longer
//   beyond the unloaded latency than that count allows fails `delay`; one whose window may
//   reach back before the run (state from earlier tests) is judged only on fresh state;
// - at least: the admissions surely before it and surely in its window under the stated kind
//   (sliding; fixed on the clock: both surely within one window; first-hit: on fresh state,
//   within the run's first window). A request answered sooner than that count promises, even
//   read as if it had no unloaded latency at all, fails `contract`.
// Each judgement allows the larger of 100 ms and a tenth of the delay it is held to.

#include <cstdint>
#include <optional>
#include <vector>

#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

struct SlowDownRule {
  enum class Kind { sliding, fixed, first_hit };
  int64_t after = 0;      // N: requests of a window answered at full speed
  int64_t window_ns = 0;  // W
  int64_t step_ns = 0;    // D: added per request past N
  int64_t max_ns = 0;     // the longest delay; 0: uncapped
  Kind kind = Kind::sliding;
  int64_t clock_ns = 1'000'000;  // how coarsely the limiter reads its clock
  // The delay promised to the `position`-th request of a window: (position - N) x D, capped.
  int64_t delay_at(int64_t position) const;
};

// One request held against its delay: its position's bound and the delay that bound promises.
struct SlowDownRequest {
  uint32_t identity = 0;
  uint64_t seq = 0;
  int64_t sent_ns = 0;       // from the run start
  int64_t latency_ns = 0;    // send to reply
  int64_t position = 0;      // at most (delay) or at least (contract) this in its window
  int64_t promised_ns = 0;   // the most (delay) or least (contract) delay that position allows
  int64_t tolerance_ns = 0;  // the larger of 100 ms and a tenth of promised_ns
  int64_t margin_ns = 0;     // beyond the tolerance: > 0 is a breach
};

struct SlowDownAudit {
  // The latency of a request the slow-down did not hold, read favouring the limiter: the longest
  // of the requests surely among the first N of their windows (none of them can fail), else the
  // run's shortest.
  int64_t unloaded_ns = 0;
  bool unloaded_from_undelayed = false;  // false: the shortest latency stood in
  int64_t judged_late = 0;               // requests whose window could be bounded above (delay)
  int64_t judged_early = 0;              // requests surely past N of their window (contract)
  int64_t longest_extra_ns = 0;          // the most any request took beyond the unloaded latency
  // The request furthest over the most its position allows (delay), and the one furthest
  // under the least its position promises (contract); of equals the lowest identity, then seq.
  std::optional<SlowDownRequest> latest;
  std::optional<SlowDownRequest> earliest;
  bool too_late() const { return latest && latest->margin_ns > 0; }
  bool too_early() const { return earliest && earliest->margin_ns > 0; }
};

// Each admission's promise under `delay`, for the HTML timeline: the most delay beyond the
// unloaded latency its place allows (-1: not judged), per identity in record order, identity
// `i`'s from promised_ns[starts[i]].
struct SlowDownPromises {
  std::vector<int64_t> promised_ns;
  std::vector<size_t> starts;
};

// What `delay` and `contract` allow past a promise: the larger of 100 ms and a tenth of it.
int64_t slow_down_tolerance_ns(int64_t promised_ns);

// `start_wall_ns` places fixed windows on the clock; `fresh_state`: the limiter surely started
// the run with no request counted (a fresh key, --reset, --exact). `promises`, when given, is
// filled as the audit goes (no pass of its own).
SlowDownAudit audit_slow_down(const IdentityRecords& identities, const SlowDownRule& rule,
                              int64_t start_wall_ns, bool fresh_state,
                              SlowDownPromises* promises = nullptr);

}  // namespace rlcheck::checks
