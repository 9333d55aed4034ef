#pragma once
// The probe sequence behind `rlcheck probe`: the requests it sends, phase by phase, and what it
// concludes from them (through checks/contract_inference). Internal to app/: probe_command
// runs it; probe_sequence.cpp holds the windows, probe_shapes.cpp the designs that free one
// request at a time (buckets, sliding-window counters, buckets refilled in steps), queues and
// the denial-counting control, probe_concurrency.cpp caps on requests in progress,
// probe_slow_down.cpp slow-downs,
// probe_ban.cpp bans, probe_sustained.cpp the look for a second limit.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checks/ban_probe.hpp"
#include "checks/contract_inference.hpp"
#include "checks/second_limit.hpp"
#include "checks/slow_down_probe.hpp"
#include "probe/probe_sender.hpp"

namespace rlcheck::probe {

using checks::ProbeRequest;
using checks::Readmission;

constexpr double k_step_ratio = 0.04;           // a readmission is found within 4 % of its time
constexpr int64_t k_min_step_ns = 1'000'000;    // probes never closer than 1 ms
constexpr int64_t k_first_chunk = 8;            // the burst doubles from here...
constexpr int64_t k_max_burst = 1016;           // ...up to 8 + 16 + ... + 512 requests
constexpr int k_refill_readmissions = 5;        // tokens timed to measure the refill
constexpr int64_t k_probes_per_token = 10;      // probes per refill interval while timing them
constexpr double k_virtual_step_ratio = 0.005;  // --virtual-clock: within 0.5 %
constexpr int64_t k_virtual_probes_per_token = 100;
constexpr double k_agreement = 0.10;              // cross-checks agree within 10 %
constexpr double k_anchor_tolerance = 0.05;       // a first-hit readmission lands within 5 % of W
constexpr double k_plan_margin = 1.25;            // a suggested --max-time leaves this much room
constexpr int64_t k_timing_slack_ns = 2'000'000;  // the probes' own timing, on any duration
constexpr int64_t k_limiter_resolution_ns = 1'000'000;  // a limiter's clock: milliseconds
// --virtual-clock: waits are free, but a probe looks no further ahead than 30 virtual days.
constexpr int64_t k_virtual_horizon_ns = 30LL * 86'400'000'000'000;
constexpr int k_spread_identity = 2;                  // the spread and phase tests' fresh identity
constexpr int k_control_identity = 3;                 // drained beside the first, then left alone
constexpr int k_queue_identity = 4;                   // the first identity a queue's bursts use
constexpr int64_t k_max_queue_burst = 256;            // a queue's burst sent at once, at most
constexpr int64_t k_finest_interval_ns = 20'000'000;  // a counter's phase is read from here up
// The sustained phase that looks for a second, longer limit: a fresh identity (a queue's
// first, which never meets it) paced at 90 % of the first limit's rate for up to 5 of its
// windows (burst / refill for a bucket), run only when the budget holds 2 of them at least.
constexpr int k_sustained_identity = 4;
constexpr double k_sustained_pace = 0.9;
constexpr int64_t k_sustained_spans = 5;
constexpr int64_t k_least_sustained_spans = 2;
// The concurrency test (probe_concurrency.cpp): when a first chunk sent one at a time met no
// denial, a batch sent at once on an identity of its own, then again once its replies came.
constexpr int k_concurrency_identity = 16;
constexpr int64_t k_concurrency_batch = 16;
// The slow-down reading (probe_slow_down.cpp): a batch sent at once on an identity of its own
// shows the longest delay, then trials, each an identity of its own from
// k_first_slow_trial_identity on, time the window within the bracket the first identity gave.
constexpr int k_slow_down_identity = 4;
constexpr int k_first_slow_trial_identity = 5;
constexpr int k_slow_trials = 8;
constexpr int64_t k_slow_batch_span_ns = 2'000'000'000;  // the batch's delays reach this far
// The ban test (probe_ban.cpp): where a window was read, a fresh identity sends L - 1 and, just
// before the window read could have ended, L + 1 more, during the search that follows; once a
// ban is seen, three stages of trials time what counts, each trial an identity of its own from
// k_first_trial_identity on, at steps of a twelfth of the ban up to 1.33 of it.
constexpr int k_memory_identity = 17;
constexpr int k_first_trial_identity = 18;
constexpr int k_trial_steps = 16;
constexpr int k_trial_stages = 3;

// Ends the sequence: the deadline, an errored request, Ctrl-C.
struct Halt {
  std::string reason;
};

// Ends the sequence with a finding: the probed identity is kept out by its own denials.
struct CountsDenials {
  int64_t limit = 0;  // admitted before the first denial
  std::string evidence;
};

int64_t admitted(const std::vector<ProbeRequest>& requests);
// The last denial of `requests`, else `fallback`.
int64_t last_denied(const std::vector<ProbeRequest>& requests, int64_t fallback);
double ms(int64_t ns);
bool agrees(double measured, double expected);
// Seconds, rounded up: the --max-time that would cover `ns` of probing.
int64_t whole_seconds_above(double ns);
// Whether requests sent one at a time were all admitted and read as a slow-down
// (checks::read_slow_down, in send order).
bool reads_as_slow_down(const std::vector<ProbeRequest>& one_at_a_time);

class Sequence {
 public:
  Sequence(ProbeSender& target, ProbeSender::Clock::time_point started,
           ProbeSender::Clock::time_point deadline)
      : target_(target),
        started_(started),
        deadline_(deadline),
        // Probes are free on the virtual clock: finer steps, for parameters exact enough that
        // the flags snap to what the limiter was given (1/1h, not 1/3546s).
        step_ratio_(target.virtual_clock() ? k_virtual_step_ratio : k_step_ratio),
        probes_per_token_(target.virtual_clock() ? k_virtual_probes_per_token
                                                 : k_probes_per_token) {}

  checks::InferredContract run();

 private:
  // The budget is checked before every send: a send due after the deadline never leaves, and
  // the requests of one that does are timed out by the deadline (ProbeSender::send). With
  // `at_once`, the `count` requests go out together, one connection each.
  // A send due at or before `at_ns` that was left to go out meanwhile (side_) leaves first.
  std::vector<ProbeRequest> send(int identity, int64_t count, int64_t at_ns, bool at_once = false);
  std::vector<ProbeRequest> send_unqueued(int identity, int64_t count, int64_t at_ns, bool at_once);

  int64_t elapsed_ns() const;

  // Plans from what is known: when `more_ns` of probing are still needed and the budget does
  // not hold them, stop now, naming the --max-time that would do, rather than wait to fail.
  void plan(double more_ns, const std::string& because);
  // Whether `more_ns` of probing still fit the budget (for a test that can be left out).
  bool fits(double more_ns) const;

  // What the requests said before the budget ran out: a limiter that makes requests wait
  // instead of denying them (a queue) shows as replies that grow slower, none denied.
  void note_queueing();
  // Clears every measured parameter: the result stands for none of them.
  void forget_parameters();
  // The reason when a fresh identity's first request is denied, naming what made it fresh.
  std::string fresh_identity_denied() const;

  // Single probes at geometric steps from `from_ns` (relative to `origin_ns`) until one is
  // admitted. Denied probes change no state of a sliding log, a bucket or GCRA. With
  // `with_control`, the control identity is asked at its own widening intervals meanwhile
  // (throws CountsDenials when it gets in and the probed identity, asked right after, does
  // not).
  Readmission search(int identity, int64_t origin_ns, int64_t from_ns, int64_t known_denied_ns,
                     bool with_control = false);
  // The send-to-reply time of the request (one of seen_) placed at `at_ns`; 0 when none.
  int64_t latency_of(int64_t at_ns) const;
  // Readmission::latency_slack_ns of the denial at `denied_ns` and `admitted`.
  int64_t latency_slack(int64_t denied_ns, const ProbeRequest& admitted) const;

  // What the first chunk, sent one at a time, shows: the shape whose reading follows. Each
  // shape that is not counted in requests over time is told here, so that a new one (a
  // slow-down: replies later the more were sent, none denied) is one more value and one more
  // test in read_first_chunk, and probing a window costs nothing more.
  enum class FirstChunk {
    counted,      // denials, or none yet: the burst doubles on (windows, buckets, counters)
    waits,        // replies wait instead of being denied: a queue (infer_queue)
    in_progress,  // denials depend on requests in progress: a cap (infer_concurrency, done)
    slows,        // replies later the more were sent, none denied: a slow-down (infer_slow_down)
  };
  FirstChunk read_first_chunk(const std::vector<ProbeRequest>& chunk);

  // A fresh identity for 1 until something is denied. Stops after the first chunk unless it
  // reads as counted (first_chunk_).
  std::vector<ProbeRequest> first_burst(int64_t from_ns = 0);

  void infer();

  // Once a contract is known (probe_sustained.cpp): one sustained phase just under its rate on
  // a fresh identity, for as long as the budget allows up to k_sustained_spans of its windows;
  // fills result_.second. Never throws: what ends the phase (the budget, Ctrl-C) ends it with
  // what it saw, and the first contract stands.
  void look_for_second_limit();
  void conclude_second_limit(const checks::FirstLimit& first,
                             const std::vector<ProbeRequest>& phase, const std::string& stopped);
  // Whether a phase's request due at `at_ns` still ends within the budget.
  bool sustained_send_fits(int64_t at_ns) const;

  // Drains the control identity right after the first one (when a third identity of its own
  // exists): `limit` + 1 requests, then it is left alone until search() asks it.
  void drain_control(int64_t limit, const checks::BurstCount& first);

  // One request at a time comes back: time the next few single readmissions at a tenth of an
  // interval, then tell a bucket from a sliding-window counter by where the first one came and,
  // with a second identity, by the phase test.
  void infer_bucket(int64_t burst, int64_t first_admitted, const Readmission& first,
                    const std::vector<ProbeRequest>& follow_up);
  // Probes a tenth of an interval apart were admitted in a row: a bucket that adds its tokens at
  // ticks. Probes on until a whole second run of admissions was seen (checks::read_steps).
  void infer_steps(int64_t burst, const Readmission& next, std::vector<ProbeRequest> timed,
                   int64_t step_ns);
  // The phase test on the spread identity (checks::refill_by_phase); unset when it could not
  // run: one identity only, the budget, or a second burst that did not drain as the first.
  std::optional<checks::Refill> phase_test(int64_t limit, int64_t interval_ns,
                                           const Readmission& first);

  void infer_window(int64_t limit, int64_t first_admitted, const Readmission& first,
                    const std::vector<ProbeRequest>& follow_up, int64_t freed);

  // Replies waited instead of being denied: bursts sent at once on fresh identities, doubling
  // until a denial shows how many may wait (checks::fit_queue).
  void infer_queue(const std::vector<ProbeRequest>& one_by_one);

  // Replies came later the more were sent, none denied (checks::read_slow_down on the first
  // burst, one at a time): N and the step from it, the longest delay from a batch sent at once,
  // the window from when the first identity is answered at full speed again, narrowed by trials
  // (probe_slow_down.cpp).
  void infer_slow_down(const std::vector<ProbeRequest>& one_at_a_time);
  // Trials on fresh identities, each counted past N at once and then asked once at a gap
  // within (low_ns, high_ns]: a delayed answer puts the window's end after the gap, one at full
  // speed before it. Narrows the bracket; false when the trials contradict each other.
  bool time_slow_down_window(const checks::SlowDownSteps& steps, int64_t& low_ns, int64_t& high_ns);

  // The first chunk, sent one at a time, met no denial: whether requests sent at once are
  // denied by how many are in progress, not by how many were sent (probe_concurrency.cpp).
  // Sets result_ to a concurrency cap and returns true when they are.
  bool infer_concurrency(const std::vector<ProbeRequest>& one_at_a_time);

  // Where a window was read (probe_ban.cpp): the ban test's first part now, its second left to
  // go out during the next search (side_); unset when it cannot run.
  void schedule_ban_test(int64_t limit, int64_t first_admitted, const Readmission& first);
  // Whether the ban test's second part admitted L: the count forgot what the denials outlast.
  bool ban_test_forgot(int64_t limit);
  // The ban: its length from both readmissions, what counts from three stages of trials.
  void infer_ban(int64_t limit, const Readmission& first,
                 const std::vector<ProbeRequest>& follow_up, const Readmission& second);
  // One stage: `k_trial_steps` trials (L - 1, then L + 1 `step_ns` times their number later),
  // started together not before `start_ns`, each added to `trials`, until one forgets its first
  // part: the gap it forgot at, unset when none did.
  std::optional<int64_t> ban_trials(int64_t limit, int64_t start_ns, int64_t step_ns,
                                    std::vector<checks::BanTrial>& trials);

  struct Control {
    bool active = false;
    int64_t drained_ns = 0;    // its last request
    int64_t first_gap_ns = 0;  // first asked this long after, then at doubling intervals
    int asked = 0;
  };

  ProbeSender& target_;
  ProbeSender::Clock::time_point started_;
  ProbeSender::Clock::time_point deadline_;
  double step_ratio_;
  int64_t probes_per_token_;
  checks::InferredContract result_;
  std::vector<ProbeRequest> seen_;  // every request so far
  bool budget_halt_ = false;        // the budget, not the limiter, ended the probe
  FirstChunk first_chunk_ = FirstChunk::counted;
  Control control_;
  int64_t admitted_before_denial_ = 0;  // by the first burst
  std::vector<ProbeRequest> burst_;     // the first burst, as counted
  struct SideSend {
    int identity = 0;
    int64_t count = 0;
    int64_t due_ns = 0;
    int64_t first_part_ns = 0;        // the last request sent before it, on the same identity
    int64_t conclusive_until_ns = 0;  // decided later, it tells nothing
    std::optional<std::vector<ProbeRequest>> replies;
  };
  std::optional<SideSend> side_;  // the ban test's second part
  int next_trial_identity_ = k_first_trial_identity;
};

}  // namespace rlcheck::probe
