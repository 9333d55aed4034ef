#pragma once
// A limiter's contract inferred from outside: the pure half of `rlcheck probe`. The probe
// sequence (app/probe_command) sends the requests; these functions say what their decisions
// mean, how sure that is, and whether the headers told the truth.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/request_record.hpp"

namespace rlcheck::checks {

// One request as the probe saw it: when the limiter decided it (the midpoint of send and
// reply, ns on the probe's own timeline) and what it decided.
struct ProbeRequest {
  int64_t at_ns = 0;
  engine::Outcome outcome = engine::Outcome::error;
  std::optional<int64_t> retry_ms;  // the hint the request carried, when it carried one
  int64_t latency_ns = 0;           // from send to reply
};

// What a burst sent as fast as possible did: admissions before the first denial.
struct BurstCount {
  int64_t admitted = 0;                      // before the first denial
  std::optional<int64_t> first_admitted_ns;  // when the first admission was decided
  std::optional<int64_t> first_denied_ns;    // unset: nothing was denied
  std::optional<int64_t> last_denied_ns;     // the burst's last denial
  std::optional<int64_t> first_hint_ms;      // the first denial's retry hint
  int64_t admitted_total = 0;                // every admission, before and after denials
};
BurstCount count_burst(std::span<const ProbeRequest> requests);

// Where capacity came back: between the last probe denied and the first one admitted.
struct Readmission {
  int64_t last_denied_ns = 0;
  int64_t admitted_ns = 0;
  // Each of the two was decided within half its send-to-reply time of its instant: a quarter
  // of their latencies together widens the bracket's half (slow replies, a loaded machine).
  int64_t latency_slack_ns = 0;
  // The midpoint: within half the bracket (and the latencies' slack) of the true instant.
  int64_t estimate_ns() const { return last_denied_ns + (admitted_ns - last_denied_ns) / 2; }
  int64_t uncertainty_ns() const { return (admitted_ns - last_denied_ns) / 2 + latency_slack_ns; }
};

// When the next probe of a readmission search leaves: `step_ratio` of the time elapsed since
// `origin_ns` after the last one, and never closer than `min_step_ns`. Geometric steps keep
// the relative error of the instant found at step_ratio / 2 with a few tens of probes for
// any window from milliseconds to minutes.
int64_t next_probe_ns(int64_t origin_ns, int64_t last_ns, double step_ratio, int64_t min_step_ns);

// After a readmission, a burst of `limit` requests: a window frees every slot of a compact
// burst at once (it admits limit - 1 more), a bucket or GCRA frees one token at a time (it
// admits about none). Unknown with a limit of 1, where the two behave alike.
enum class Family { window, bucket, unknown };
Family family_after_readmission(int64_t limit, int64_t follow_up_admitted);

// The spread test on a fresh identity: one admission at s0, a burst of `limit` at s0 + W/2,
// then, at the next readmission, another burst. A fixed window starts over at a boundary
// (the second batch gets the whole limit, or the readmission frees every slot); a sliding
// window only frees the slot of the single admission first.
enum class WindowKind { fixed, sliding };
WindowKind window_kind(int64_t limit, int64_t second_batch_admitted,
                       std::optional<int64_t> after_readmission_admitted);

// The window from two readmissions of the same identity (the second one W after the first).
// Sliding: the slot the first readmission's probe took frees exactly W after it was decided.
// Fixed: both readmissions are boundaries, each seen within its bracket.
int64_t window_between(WindowKind kind, const Readmission& first, const Readmission& second);

// Tokens per second from the instants of successive single readmissions of a drained bucket
// (each an admitted probe). Unset with fewer than two.
std::optional<double> refill_from(std::span<const int64_t> readmissions_ns);

// Whether a fixed window's identity readmissions came W after its own first admission (a
// window opened by the first hit: INCR + EXPIRE) rather than at a boundary shared by every
// identity (multiples of W on the limiter's clock). `window_ns` is the measured window,
// `tolerance_ns` how far an instant may be off; both readmissions must agree for first-hit.
// `second_since_first_ns` is unset when the second identity met a boundary before that.
bool first_hit_anchor(int64_t window_ns, int64_t tolerance_ns, int64_t first_since_admission_ns,
                      std::optional<int64_t> second_since_admission_ns);

// The bucket family (one request freed at a time once drained), told apart by where capacity
// comes back. A token bucket (or GCRA) gives back its first token one refill interval after the
// drain; a sliding-window counter (prev * (1 - f) + curr < L) frees nothing until its window
// ends and then one request per interval: its window opened by the first hit ends `limit`
// intervals after the first admission, one on the clock at the next boundary, anywhere in
// (0, limit intervals].
enum class Refill { token_bucket, counter_first_hit, counter_clock, unknown };

// From the drained identity alone: `first_ns` from its first admission to its first single
// readmission, `interval_ns` between the single readmissions that followed, `tolerance` a
// fraction of each prediction. One interval reads as a bucket (a clock counter whose boundary
// happened to fall there looks alike: the phase test decides), `limit` intervals as a counter
// opened by the first hit, anything else below `limit` intervals as a counter on the clock;
// unknown with a limit below 2 or beyond `limit` intervals.
Refill refill_by_first_readmission(int64_t limit, int64_t interval_ns, int64_t first_ns,
                                   double tolerance);

// The phase test: a second identity is drained so that the clock boundary predicted from the
// first identity's readmissions falls `boundary_in_ns` after its first admission, halfway
// between one interval and one window. Where it was readmitted (`readmitted_in_ns` after its
// first admission) names the design when exactly one prediction is within `tolerance` (a
// fraction of it, plus `slack_ns`): one interval (bucket), `limit` intervals (first-hit
// counter), the boundary (clock counter). Unknown otherwise.
Refill refill_by_phase(int64_t limit, int64_t interval_ns, int64_t boundary_in_ns,
                       int64_t readmitted_in_ns, double tolerance, int64_t slack_ns);

// Where the second identity's first admission should go: `lead_ns` before the first boundary
// (boundaries at `boundary_ns` + k * `window_ns`) that is at least `lead_ns` after
// `not_before_ns`.
int64_t phase_test_start_ns(int64_t boundary_ns, int64_t window_ns, int64_t lead_ns,
                            int64_t not_before_ns);

// Denial counting, seen through a control: an identity drained right after the probed one and
// then left alone, asked at widening intervals (`first_gap_ns` after its drain, then doubling)
// while the probed one keeps asking. A limiter that ignores denials gives the control its
// capacity back no sooner than the probed identity (drained first), so the control admitted
// while the probed identity, asked right after, is denied means the probed identity's own
// denials keep it out (HAProxy http_req_rate, elastic expiry).
int64_t control_due_ns(int64_t drained_ns, int64_t first_gap_ns, int asked);
bool counts_denials(engine::Outcome control, engine::Outcome probed_right_after);

// A queue (nginx limit_req without nodelay): requests wait instead of being denied.
// One by one (each sent when the previous reply came): after the first, every reply waits
// about one departure interval more than the first did, and none is denied. Needs 4 requests
// at least, waits that stand clear of the first reply's latency (4 times it and 2 ms more), and
// regular ones (the middle half within 25 % of their median).
bool waits_one_by_one(std::span<const ProbeRequest> one_by_one);

// Sent all at once: an admitted request waits about its place in the queue times 1/R, its
// place its rank among the waits (requests sent together arrive in an order of their own).
// Fitted by least squares: R from the slope, B the number that waited more than half an
// interval beyond the fastest admitted reply, when any request was denied (unset when nothing
// was: B is at least `waited`). Unset unless the fit is clear: 3 admitted at least, a slope of
// 1 ms a place at least, and waits within a quarter interval of the line on average.
struct QueueFit {
  double rate_per_s = 0;
  double rate_tolerance = 0;  // a fraction of the rate: the fit's scatter over its span
  int64_t waited = 0;         // admitted requests that waited
  std::optional<int64_t> queue;
  int64_t denied = 0;
};
std::optional<QueueFit> fit_queue(std::span<const ProbeRequest> at_once);

// Where a measured rate can lie, per second: what its readmissions' brackets allow.
struct RateInterval {
  double low_per_s = 0;
  double high_per_s = 0;
  // `rate` within `fraction` of itself either way.
  static RateInterval around(double rate, double fraction) {
    return {rate * (1 - fraction), rate * (1 + fraction)};
  }
  bool contains(double rate) const { return rate >= low_per_s && rate <= high_per_s; }
};

// The interval of a rate timed from single readmissions, one every 1/rate (a bucket's tokens,
// a counter's slots): token k came after the last request denied before admission k was
// decided and by the time admission k was, so the span between tokens i and j (j - i
// intervals) lies between the tightest and the widest pairing of their bounds, each a further
// `resolution_ns` off (the limiter's clock, milliseconds for most); the rate lies inside
// every pair's interval. A request was decided between its send and its reply: at_ns ±
// latency_ns / 2. `timed` is every request of the timing in send order; admissions before its
// first denial are not counted. Unset with fewer than two admissions counted, or when no one
// rate fits every pair.
std::optional<RateInterval> refill_interval(std::span<const ProbeRequest> timed,
                                            int64_t resolution_ns);

// The sustained phase that looks for a second, longer limit once the first is known
// (app/probe_sustained, checks/second_limit).
struct SecondLimitSearch {
  // "found"; "none-seen" (the phase ran its span without a denial the first limit could not
  // explain); "not-run" (`reason` says why: the budget, one identity, the first contract).
  std::string outcome = "not-run";
  std::string reason;
  int64_t requests = 0;   // the phase's requests
  int64_t admitted = 0;   // of which admitted
  int64_t span_ms = 0;    // from its first request to its last
  double rate_per_s = 0;  // the rate it was paced at
  // found: admissions before the second limit's first denial, and the wait from the phase's
  // first admission until one was admitted again (else the hint), as measured.
  std::optional<int64_t> limit;
  std::optional<int64_t> window_ms;
  double window_tolerance_ms = 0;
  bool window_from_hint = false;
  // not-run for the budget: the --max-time that would leave room for the phase.
  std::optional<int64_t> max_time_needed_ms;
  // How many of the target's runs came before the phase: the headers read for the first
  // limit are theirs (the phase's denials may advertise the second).
  size_t runs_before = 0;
};

struct InferredContract {
  // fixed, sliding, sliding-counter, token-bucket, gcra, queue, denial-counting, concurrency,
  // ban, slow-down, none, unknown
  std::string algorithm = "unknown";
  // fixed, sliding, sliding-counter, denial-counting, ban (its inner window's); concurrency: the
  // most in progress at once
  std::optional<int64_t> limit;
  std::optional<int64_t> window_ms;    // fixed, sliding, sliding-counter, ban's inner: as measured
  std::optional<std::string> anchor;   // fixed, sliding-counter, slow-down: "clock" or "first-hit"
  std::optional<int64_t> burst;        // token-bucket, gcra
  std::optional<double> refill_per_s;  // token-bucket, gcra; queue: its departure rate
  std::optional<int64_t> queue;        // queue: how many may wait
  // concurrency: the fastest admitted reply (ms), the service-time floor seen (not a promise)
  std::optional<double> hold_ms;
  // token-bucket refilled in steps: the tokens of a tick, and the ticks' interval (ms, as
  // measured, and how far off); refill_per_s is then their rate
  std::optional<int64_t> step_tokens;
  std::optional<int64_t> step_interval_ms;
  double step_interval_tolerance_ms = 0;
  // ban: its inner window's kind ("fixed" on the clock, or "sliding"), and how long a ban lasts
  // from the request that began it to the next admission (ms, as measured, and how far off)
  std::optional<std::string> inner;
  std::optional<int64_t> ban_ms;
  double ban_tolerance_ms = 0;
  // slow-down: `limit` is N (answered at full speed in a window), `window_ms` the window, and
  // each request past N answered `delay_step_ms` later than the one before (ms, as measured,
  // and how far off) up to `max_delay_ms` (unset when no longest delay was seen)
  std::optional<double> delay_step_ms;
  double delay_step_tolerance_ms = 0;
  std::optional<double> max_delay_ms;
  double max_delay_tolerance_ms = 0;
  // Whether a client that keeps sending is kept out by its own denials (a control identity
  // left alone got back in): unset when that was not tested.
  std::optional<bool> denial_counting;
  // How far the measured window (ms) may be from the true one, and where the true refill can
  // lie: the brackets of the readmissions they came from and the probes' own timing.
  double window_tolerance_ms = 0;
  RateInterval refill_interval;
  // Unknown because the budget is too short: the --max-time that would do (ms), planned from
  // the first denial's hint.
  std::optional<int64_t> max_time_needed_ms;
  std::string confidence = "low";     // high: every cross-check agreed; low: see notes
  std::vector<std::string> evidence;  // what was observed, one sentence each
  std::vector<std::string> notes;     // caveats
  std::string reason;                 // unknown: why it could not tell
  // Unset when no contract was inferred (nothing to pace a sustained phase against).
  std::optional<SecondLimitSearch> second;
  // --cost N: every request cost N units, and the limit, burst, refill and the second limit
  // above are in units (the requests' counts times N).
  int64_t cost = 1;
};

// What the responses' headers advertised (http; nothing for a Redis limiter).
struct AdvertisedContract {
  std::optional<int64_t> limit;
  std::optional<int64_t> window_s;
  bool any() const { return limit.has_value() || window_s.has_value(); }
};

// Whether what was observed agrees with what was advertised. Unset when nothing was
// advertised or nothing could be inferred. A window advertised in whole seconds is taken as
// rounded up (the true window is within (w - 1 s, w]), and 10 % of measurement slack is
// allowed on every duration and rate. A bucket's advertised q per w is its burst and refill; a
// sliding-window counter's (or a denial-counting limiter's) its limit and window. A queue is not
// judged.
struct AdvertisedJudgement {
  std::optional<bool> matches;
  std::vector<std::string> reasons;  // why it does not match
};
AdvertisedJudgement judge_advertised(const InferredContract& inferred,
                                     const AdvertisedContract& advertised);

// Snapping a measured duration to the value the limiter was most likely configured with, so
// that flags pasted back judge the limiter with its own parameters rather than with the
// measurement's error. First rule that lands within `tolerance_ms` of `measured_ms`:
//  1. the advertised value (the headers' window, in whole seconds);
//  2. the nearest whole second, then 100 ms, then 10 ms step (never 0);
//  3. else the measurement, to the millisecond.
struct SnappedDuration {
  int64_t ms = 0;
  std::string basis;  // "advertised", "round", "measured"
};
SnappedDuration snap_duration_ms(double measured_ms, double tolerance_ms,
                                 std::optional<int64_t> advertised_ms);

// The same for a refill rate, snapped only to a value inside `interval` (where the true rate
// can lie): the advertised q per w, then a whole number of tokens per second (the only one
// inside: with two or more inside, picking one would be a guess), then one token
// per whole seconds, then one token per the token interval snapped as a duration (inside the
// interval's durations), else the measured interval to the millisecond ("measured"). `text`
// is the --refill value ("5/s", "10/60s", "1/250ms").
struct SnappedRate {
  std::string text;
  double per_s = 0;
  std::string basis;  // "advertised", "round", "measured"
};
SnappedRate snap_rate(double measured_per_s, const RateInterval& interval,
                      std::optional<int64_t> advertised_q, std::optional<int64_t> advertised_w_s);

// The flags that make `rlcheck redis` / `http` judge this contract ("--contract sliding
// --limit 5 --window 1s"), with the window and refill snapped (above) against what was
// advertised; empty when nothing was inferred. A first-hit fixed window or sliding-window counter
// adds `--anchor first-hit`; a sliding-window counter's window is `limit` refill intervals; a
// queue is "--contract queue --refill R --queue B" (nothing without B); a slow-down
// "--contract slow-down:first-hit:N/W,D[,max]" with W, D and max snapped as durations. A limiter
// that counts denials gets none: no contract passes while a client keeps sending.
std::string contract_flags(const InferredContract& inferred,
                           const AdvertisedContract& advertised = {});

// The flags of contract_flags, and what they cost the confidence: a window or refill that no
// snapping rule placed inside the measurement's interval goes into the flags as measured, the
// confidence becomes low and a note says why (a round value nearby would have been a guess).
std::string suggest_flags(InferredContract& inferred, const AdvertisedContract& advertised = {});

// The same contract as one --contract spec ("sliding:5/1s", "fixed:5/1s@first-hit",
// "token-bucket:5,10/s"), snapped alike, for naming it as a part of several; "" when nothing
// was inferred.
std::string contract_spec(const InferredContract& inferred,
                          const AdvertisedContract& advertised = {});
// A second limit the sustained phase found, as a sliding part ("sliding:15/5s", its window
// snapped as snap_duration_ms does with nothing advertised); "" unless found.
std::string second_limit_spec(const SecondLimitSearch& second);

}  // namespace rlcheck::checks
