#pragma once
// When a test fails under a contract the user did not name, the promise the limiter does seem
// to keep. A few candidates are inferred from the records (limit and window from the admission
// spacing and the hints, with the limit named; burst from the first run of admissions, refill
// from the admission rate after it and from the hints), each rounded to what a command line
// spells, and each is audited by the same code the checks use. A candidate fits when under it
// the admission checks, the utilisation and the retry hints would all have passed and no
// denial came with room, even in a run utilisation skips: it explains every admission, denial
// and hint. The verdict does not change: the promise judged was not kept.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checks/checks.hpp"
#include "checks/run_stats.hpp"
#include "checks/slow_down_audit.hpp"
#include "engine/record_log.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::checks {

// One run's records as summarize_run left them, kept for the fit.
struct RecordedRun {
  engine::RecordLog records;
  int64_t start_wall_ns = 0;  // the run's start line on the wall clock (fixed windows)
};

// A contract that explains what a test observed, and the flags that name it.
struct ContractFit {
  // sliding, fixed, sliding-counter, token-bucket, queue, concurrency, ban or slow-down
  std::string contract;
  std::string anchor;  // fixed, sliding-counter: "clock" or "first-hit"; empty otherwise
  AdmissionRule rule;
  int64_t limit = 0;                   // sliding, fixed, ban (its window)
  int64_t window_ms = 0;               // sliding, fixed, ban (its window)
  int64_t burst = 0;                   // token-bucket
  std::string refill;                  // token-bucket, queue: "1/s", "1/2s"
  std::optional<int64_t> queue;        // queue: how many may wait
  std::optional<int64_t> nodelay;      // queue: how many excess requests pass undelayed
  std::optional<int64_t> concurrency;  // concurrency: the cap (also `limit`)
  // ban: how long a ban lasts; its inner window is `limit` per `window_ms`, sliding or fixed on
  // the clock (`anchor` "clock"), as `rule` says.
  std::optional<int64_t> ban_ms;
  // slow-down: N (also `limit`) in the window (also `window_ms`), the step, the longest delay and
  // the window's kind; `rule` is then a stand-in, as under --contract slow-down.
  std::optional<SlowDownRule> slow_down;
  std::string flags;  // "--contract token-bucket --burst 5 --refill 1/s"
  // Several contracts: "checked" when the fit is the same parts with every denial counted by
  // those before the one that denied it (--consume-on-deny checked); empty otherwise.
  std::string consume_on_deny;
  std::vector<std::string> clears;  // ids of the failed checks that pass under it
};

// The candidates worth auditing, simplest first (a ban behind the window audited after the
// windows and before the buckets, and only where a denial came longer after its identity's
// last admission than that window: a window never does that), none equal to `chosen` (the contract
// that was audited); none when no identity was admitted again after its first denial. Fixed windows
// are not refitted when `chosen` is fixed: its windows are already placed on the records. A
// concurrency cap first, but none where the admissions' waits climbed with the number ahead of
// them (latency_fit's waits_climb: a queue's staircase). Where admissions waited, queues next,
// those with an undelayed part (nodelay=K, K read from the admissions answered at once before
// the first that waited) before those without. Where nothing was denied, only slow-downs
// (checks/latency_fit), when the latencies read as one.
std::vector<ContractFit> fit_candidates(const std::vector<RecordedRun>& runs,
                                        const AdmissionRule& chosen);

// The first candidate that fits, for a test whose `checks` (under `params` and `audit`, on
// `stats`, one per run of `runs`) failed a check the contract decides; nullopt when nothing
// such failed or nothing fits. `runs` stay whole; their records may be reordered.
std::optional<ContractFit> fit_contract(std::vector<RecordedRun>& runs,
                                        const std::vector<RunStats>& stats,
                                        const std::vector<CheckResult>& checks,
                                        const CheckParams& params, const AuditParams& audit);

// Several contracts read strictly (--consume-on-deny none) whose test failed a check the
// contracts decide: the runs replayed with every part but the last counting denials too
// (--consume-on-deny checked, what libraries that hit each limit in turn do), and judged again.
// The fit, clearing the failed checks that pass under that reading, when it fails no check
// that held and leaves no denial with room; nullopt otherwise, or when nothing such failed
// (a hint wrong under both readings stays failed). `runs` may be reordered.
std::optional<ContractFit> fit_consume_on_deny(std::vector<RecordedRun>& runs,
                                               const std::vector<RunStats>& stats,
                                               const std::vector<CheckResult>& checks,
                                               const CheckParams& params, const AuditParams& audit);

// The readings of an advertised policy of `limit` per `window_ms` (IETF RateLimit-Policy
// q;w, which leaves the algorithm open): a token bucket of burst q refilled q per w, fixed
// windows on the clock, and fixed windows opened at the first hit when the limiter surely
// started the run empty (otherwise their phase is unknown, and that reading would explain
// nearly anything). A sliding window, the first reading, is what the test was judged by.
std::vector<ContractFit> policy_readings(int64_t limit, int64_t window_ms,
                                         const AdmissionRule& chosen);

// A test judged under one contract, replayed under another.
struct Rejudged {
  ContractFit fit;
  std::vector<RunStats> stats;
  std::vector<CheckResult> checks;
};

// The first of `candidates` that explains the test (as fit_contract asks), with the runs and
// checks replayed under it; nullopt when none does.
std::optional<Rejudged> rejudge(std::vector<ContractFit> candidates, std::vector<RecordedRun>& runs,
                                const std::vector<RunStats>& stats,
                                const std::vector<CheckResult>& checks, const CheckParams& params,
                                const AuditParams& audit);

// Appends the fit's flags to the detail of every check it clears.
void note_fit(std::vector<CheckResult>& checks, const ContractFit& fit);

// The most admissions of one identity in one run whose send..reply spans all overlap (all in
// flight at one instant). Above the limit (or burst) under test, that is a check-then-act
// race's signature: the limiter let them all through before any counted, which a larger
// capacity would only disguise, so no fit is proposed for it (fit_candidates: none).
int64_t admitted_at_once(const std::vector<RecordedRun>& runs);

// Appends, to the detail of the over-admission checks that failed, that `at_once` admissions
// were in flight together (over `limit`): a measurement, not a diagnosis (a race is named only
// by a serial rerun, runner/serial_rerun).
void note_race(std::vector<CheckResult>& checks, int64_t at_once, int64_t limit);

// `value` rounded to `digits` significant figures (value > 0).
double round_significant(double value, int digits);

// A refill rate as --refill spells it: 1 -> "1/s", 0.5 -> "1/2s", 2.5 -> "5/2s", 0.37 ->
// "37/100s".
std::string refill_text(double tokens_per_s);

}  // namespace rlcheck::checks
