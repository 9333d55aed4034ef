#pragma once
// The contract checks: each has a stable id and is pass, fail or skip, with the figure.

#include <optional>
#include <string>
#include <vector>

#include "checks/run_stats.hpp"

namespace rlcheck::checks {

enum class Status { pass, fail, skip };
// interrupted: Ctrl-C ended the test early; the checks judged only what was measured.
enum class Verdict { pass, fail, error, interrupted };

struct CheckResult {
  std::string id;  // "limit", "exact", "retry-after-present", ...
  Status status = Status::skip;
  std::string detail;  // the figure that decided it, in one line
  // A fail that proves nothing against the limiter but leaves the test without a verdict: the
  // run shows what cannot pass, not who is at fault (every request denied on an identity that
  // may not have been fresh). The verdict is then `error` (exit 3), as for the errors check.
  bool inconclusive = false;
  // A pass with a cost worth knowing (a TTL longer than needed, no lock-out seen): shown as a
  // warning, never a failure.
  bool warning = false;
};

// --verify-retry-after: one retry, made exactly when a denied identity was told.
struct RetryVerification {
  bool attempted = false;   // false: skip_reason says why not
  std::string skip_reason;  // "no identity ended its run denied with a hint", ...
  int run = 0;
  uint32_t identity = 0;
  int64_t told_ms = 0;  // the hint retried: of the identity's last denial, or of a probe
  // The phases of the hint's second it was read at: 1, or 4 for whole-second hints that leave
  // room for probes (runner/retry_verification); the one promising the earliest is retried.
  int phases = 1;
  int64_t waited_ms = 0;  // from that denial's reply to the retry's send
  bool allowed = false;   // the retry's outcome
  std::string outcome;    // "allowed", "denied (told 1000ms again)", "error: ..."
  // Ctrl-C came during the wait or the retry: the test as a whole is interrupted.
  bool interrupted = false;
};

struct CheckParams {
  int64_t limit = 10;
  int64_t requests = 200;
  int64_t window_ms = 60'000;
  int64_t max_retry_after_ms = 60'000;
  int64_t max_errors = 0;  // per run
  bool exact = false;
  bool key_ttl_applies = true;          // redis targets have keys to inspect
  bool retry_hint_optional = false;     // http --no-require-retry-after
  std::string contract = "sliding";     // the promise audited over time
  bool stepped = false;                 // a token bucket refilled in steps (--refill K/I,steps)
  std::string tick_anchor;              // its --anchor (clock, first-hit), empty: not given
  bool bucket_may_predate_run = false;  // --anchor first-hit without fresh state
  std::string slow_down;                // --contract slow-down: its spec, for the details
  // Several contracts: --consume-on-deny as given ("none" or "checked"); empty with one.
  std::string consume_on_deny;
  // First-hit windows (fixed or a counter's) whose phase state from before the run may have set
  // (no fresh limiter state): the audits judge little, and their passes say so.
  bool phase_unknown = false;
  // Every run surely met a limiter with no state for its identities (a key of rlcheck's own,
  // --reset, --reset-cmd, --exact): a run denied from its first request proves the limiter
  // admits nothing. Else `identity_note` says why the state may not have been fresh.
  bool fresh_state = false;
  std::string identity_note;
  // retry-after-accuracy: each hint's tolerance, from its resolution (hint_tolerance).
  AccuracyTolerance retry_tolerance;
  // --hint-resolution: the unit a script's hints are judged in (settle_hint_resolution).
  config::HintResolution hint_resolution = config::HintResolution::auto_detect;
  bool verify_retry_after = false;
  // The longest TTL a limiter key can need: the window, or a bucket's refill from empty to
  // full (burst / refill rate); 0: not judged. key-ttl allows max(1 s, 10 %) more.
  int64_t key_ttl_needed_ms = 0;
  // --fault: the fail mode expected while a fault holds ("open" or "closed"; unset: not
  // judged), and the longest a limiter may take to decide normally again after one.
  std::optional<std::string> expect_fail_mode;
  int64_t recovery_ms = 1000;
  // --clock-skew: the offsets the clients' clocks were given (contract's detail names them).
  std::vector<config::Nanos> clock_skews;
};

// What a pass under an unknown first-hit phase leaves unjudged, to append to its detail (`brief`:
// a pointer to the whole note, which `limit` carries).
std::string unknown_phase_note(const CheckParams& params, bool brief = false);

std::vector<CheckResult> evaluate_checks(const std::vector<RunStats>& runs,
                                         const CheckParams& params,
                                         const std::optional<RetryVerification>& verification = {});

// error when the errors check failed (the test itself is in doubt), else fail when any
// check failed, else pass.
Verdict verdict_of(const std::vector<CheckResult>& checks);

const char* status_name(Status status);
const char* verdict_name(Verdict verdict);
// The verdict that speaks for several: interrupted, then error, then fail, then pass.
Verdict worst_verdict(Verdict a, Verdict b);

}  // namespace rlcheck::checks
