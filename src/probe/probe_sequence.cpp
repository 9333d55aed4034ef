#include "probe/probe_sequence.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/interrupt.hpp"

namespace rlcheck::probe {

using engine::Outcome;

int64_t admitted(const std::vector<ProbeRequest>& requests) {
  return std::count_if(requests.begin(), requests.end(),
                       [](const ProbeRequest& r) { return r.outcome == Outcome::allowed; });
}

int64_t last_denied(const std::vector<ProbeRequest>& requests, int64_t fallback) {
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
    if (it->outcome == Outcome::denied)
      return it->at_ns;
  }
  return fallback;
}

double ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

bool agrees(double measured, double expected) {
  return expected > 0 && std::abs(measured - expected) <= k_agreement * expected;
}

int64_t whole_seconds_above(double ns) {
  return static_cast<int64_t>(std::ceil(ns * k_plan_margin / 1e9));
}

checks::InferredContract Sequence::run() {
  try {
    infer();
    look_for_second_limit();
  } catch (const CountsDenials& locked) {
    result_.algorithm = "denial-counting";
    result_.confidence = "high";
    forget_parameters();
    result_.limit = locked.limit;
    result_.denial_counting = true;
    result_.evidence.push_back(locked.evidence);
    result_.notes.push_back(
        "no flags: while a client keeps sending, its own denials keep it out, so a load run "
        "fails `utilisation` under every contract (the limiter counts denied requests as hits)");
  } catch (const Halt& halt) {
    result_.algorithm = "unknown";
    result_.confidence = "low";
    forget_parameters();
    result_.reason = halt.reason;
    if (budget_halt_)
      note_queueing();
  }
  return result_;
}

std::string Sequence::fresh_identity_denied() const {
  return fmt::format(
      "the first request of a fresh identity ({}) was denied: the limit may be 0, or the "
      "identity is not what the limiter keys on",
      target_.fresh_identity_source());
}

void Sequence::forget_parameters() {
  result_.limit.reset();
  result_.window_ms.reset();
  result_.anchor.reset();
  result_.burst.reset();
  result_.refill_per_s.reset();
  result_.queue.reset();
  result_.hold_ms.reset();
  result_.inner.reset();
  result_.ban_ms.reset();
  result_.step_tokens.reset();
  result_.step_interval_ms.reset();
  result_.delay_step_ms.reset();
  result_.max_delay_ms.reset();
}

std::vector<ProbeRequest> Sequence::send(int identity, int64_t count, int64_t at_ns, bool at_once) {
  if (side_ && !side_->replies && side_->due_ns <= at_ns) {
    side_->replies = send_unqueued(side_->identity, side_->count,
                                   std::max(side_->due_ns, target_.now_ns()), false);
  }
  return send_unqueued(identity, count, at_ns, at_once);
}

std::vector<ProbeRequest> Sequence::send_unqueued(int identity, int64_t count, int64_t at_ns,
                                                  bool at_once) {
  if (engine::interrupted())
    throw Halt{"interrupted"};
  // Each request of the batch needs a millisecond of the budget at least (from now under the
  // virtual clock, where waiting for `at_ns` costs nothing).
  const auto leaves = target_.virtual_clock() ? ProbeSender::Clock::now() : target_.at(at_ns);
  if (leaves + std::chrono::milliseconds(count) > deadline_) {
    budget_halt_ = true;
    throw Halt{"--max-time ran out before the probe could tell"};
  }
  auto requests = target_.send(identity, count, target_.at(at_ns), deadline_, at_once);
  seen_.insert(seen_.end(), requests.begin(), requests.end());
  if (target_.interrupted())
    throw Halt{"interrupted"};
  if (target_.budget_ran_out()) {
    budget_halt_ = true;
    throw Halt{"--max-time ran out with a request still unanswered"};
  }
  if (!target_.last_error().empty())
    throw Halt{fmt::format("a request errored: {}", target_.last_error())};
  return requests;
}

int64_t Sequence::elapsed_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(ProbeSender::Clock::now() - started_)
      .count();
}

void Sequence::plan(double more_ns, const std::string& because) {
  if (target_.virtual_clock()) {
    // Waits cost nothing on the virtual clock: only a wait past the horizon is given up.
    if (more_ns > static_cast<double>(k_virtual_horizon_ns)) {
      throw Halt{
          fmt::format("{}, so telling the contract takes about {:.1f} virtual days more, "
                      "past the {} days a virtual probe looks ahead",
                      because, more_ns / 86'400e9, k_virtual_horizon_ns / 86'400'000'000'000)};
    }
    return;
  }
  const auto left = deadline_ - ProbeSender::Clock::now();
  if (more_ns <= static_cast<double>(std::chrono::nanoseconds(left).count()))
    return;
  const int64_t seconds = whole_seconds_above(static_cast<double>(elapsed_ns()) + more_ns);
  result_.max_time_needed_ms = seconds * 1000;
  budget_halt_ = true;
  throw Halt{
      fmt::format("--max-time is too short: {}, so telling the contract takes about {:.1f} s more; "
                  "--max-time {}s would do",
                  because, more_ns / 1e9, seconds)};
}

bool Sequence::fits(double more_ns) const {
  if (target_.virtual_clock())
    return more_ns <= static_cast<double>(k_virtual_horizon_ns);
  const auto left = deadline_ - ProbeSender::Clock::now();
  return more_ns <= static_cast<double>(std::chrono::nanoseconds(left).count());
}

void Sequence::note_queueing() {
  int64_t fastest = 0;
  int64_t slowest = 0;
  int64_t answered = 0;
  for (const ProbeRequest& request : seen_) {
    if (request.outcome == Outcome::denied)
      return;
    if (request.outcome != Outcome::allowed)
      continue;
    fastest = answered == 0 ? request.latency_ns : std::min(fastest, request.latency_ns);
    slowest = std::max(slowest, request.latency_ns);
    ++answered;
  }
  if (answered == 0)
    return;
  result_.evidence.push_back(
      fmt::format("{} answered, all admitted, none denied; replies took {:.1f} to {:.1f} ms{}",
                  answered, ms(fastest), ms(slowest),
                  slowest > 4 * std::max<int64_t>(fastest, k_min_step_ns)
                      ? ": requests wait instead of being denied (a queue?)"
                      : ""));
}

int64_t Sequence::latency_of(int64_t at_ns) const {
  for (auto it = seen_.rbegin(); it != seen_.rend(); ++it) {
    if (it->at_ns == at_ns)
      return it->latency_ns;
  }
  return 0;
}

int64_t Sequence::latency_slack(int64_t denied_ns, const ProbeRequest& admitted) const {
  return (latency_of(denied_ns) + admitted.latency_ns) / 4;
}

Readmission Sequence::search(int identity, int64_t origin_ns, int64_t from_ns,
                             int64_t known_denied_ns, bool with_control) {
  int64_t denied_at = known_denied_ns;
  int64_t due = checks::next_probe_ns(origin_ns, from_ns, step_ratio_, k_min_step_ns);
  int64_t denials = 0;
  while (true) {
    const int64_t control_due =
        checks::control_due_ns(control_.drained_ns, control_.first_gap_ns, control_.asked);
    if (with_control && control_.active && control_due <= due) {
      // The control, left alone since its drain, is asked before the probed identity's next
      // probe; when it gets in, the probed identity is asked at once.
      const ProbeRequest asked =
          send(k_control_identity, 1, std::max(control_due, target_.now_ns())).front();
      ++control_.asked;
      if (asked.outcome != Outcome::allowed)
        continue;
      control_.active = false;
      const ProbeRequest probed = send(identity, 1, target_.now_ns()).front();
      if (checks::counts_denials(asked.outcome, probed.outcome)) {
        throw CountsDenials{
            admitted_before_denial_,
            fmt::format(
                "a second identity drained right after the first and then left alone got back in "
                "{:.0f} ms after its drain ({} asked); the first, which kept asking ({} denied in "
                "{:.0f} ms since its burst), was denied right after: its own denials keep "
                "it out",
                ms(asked.at_ns - control_.drained_ns), control_.asked, denials + 1,
                ms(probed.at_ns - known_denied_ns))};
      }
      if (probed.outcome == Outcome::allowed)
        return {denied_at, probed.at_ns, latency_slack(denied_at, probed)};
      denied_at = probed.at_ns;
      ++denials;
      due = checks::next_probe_ns(origin_ns, denied_at, step_ratio_, k_min_step_ns);
      continue;
    }
    const ProbeRequest probe = send(identity, 1, std::max(due, target_.now_ns())).front();
    if (probe.outcome == Outcome::allowed)
      return {denied_at, probe.at_ns, latency_slack(denied_at, probe)};
    denied_at = probe.at_ns;
    ++denials;
    due = checks::next_probe_ns(origin_ns, denied_at, step_ratio_, k_min_step_ns);
  }
}

bool reads_as_slow_down(const std::vector<ProbeRequest>& one_at_a_time) {
  std::vector<int64_t> latencies;
  for (const ProbeRequest& request : one_at_a_time) {
    if (request.outcome != Outcome::allowed)
      return false;
    latencies.push_back(request.latency_ns);
  }
  return checks::read_slow_down(latencies).has_value();
}

Sequence::FirstChunk Sequence::read_first_chunk(const std::vector<ProbeRequest>& chunk) {
  if (checks::waits_one_by_one(chunk))
    return FirstChunk::waits;
  if (reads_as_slow_down(chunk))
    return FirstChunk::slows;
  if (!checks::count_burst(chunk).first_denied_ns && infer_concurrency(chunk))
    return FirstChunk::in_progress;
  return FirstChunk::counted;
}

std::vector<ProbeRequest> Sequence::first_burst(int64_t from_ns) {
  std::vector<ProbeRequest> burst;
  for (int64_t chunk = k_first_chunk;; chunk *= 2) {
    const auto part = send(1, chunk, std::max(from_ns, target_.now_ns()));
    burst.insert(burst.end(), part.begin(), part.end());
    if (chunk == k_first_chunk) {
      first_chunk_ = read_first_chunk(part);
      if (first_chunk_ != FirstChunk::counted)
        return burst;
    }
    if (checks::count_burst(part).first_denied_ns ||
        static_cast<int64_t>(burst.size()) >= k_max_burst) {
      return burst;
    }
    // A slow-down that lets more than the first chunk through at full speed.
    if (chunk > k_first_chunk && reads_as_slow_down(burst)) {
      first_chunk_ = FirstChunk::slows;
      return burst;
    }
  }
}

void Sequence::infer() {
  auto& evidence = result_.evidence;
  // Phase 1: as fast as possible on a fresh identity, doubling until something is denied.
  std::vector<ProbeRequest> burst = first_burst();
  switch (first_chunk_) {
    case FirstChunk::waits:
      infer_queue(burst);
      return;
    case FirstChunk::in_progress:
      return;  // infer_concurrency read the cap
    case FirstChunk::slows:
      infer_slow_down(burst);
      return;
    case FirstChunk::counted:
      break;
  }
  burst_ = burst;
  checks::BurstCount count = checks::count_burst(burst);
  if (count.first_denied_ns && count.admitted == 0 && !target_.fresh_identities() &&
      count.first_hint_ms) {
    // One identity, still limited by an earlier probe or client: wait as its hint says.
    const int64_t wait_ns = *count.first_hint_ms * 1'000'000;
    plan(static_cast<double>(wait_ns), fmt::format("the identity is limited for {} ms more "
                                                   "(its first denial's hint)",
                                                   *count.first_hint_ms));
    evidence.push_back(fmt::format("the identity was limited: waited {} ms as its hint said",
                                   *count.first_hint_ms));
    burst = first_burst(*count.last_denied_ns + wait_ns + k_timing_slack_ns);
    if (first_chunk_ == FirstChunk::slows)
      infer_slow_down(burst);
    if (first_chunk_ == FirstChunk::in_progress || first_chunk_ == FirstChunk::slows)
      return;
    burst_ = burst;
    count = checks::count_burst(burst);
  }
  if (!count.first_denied_ns) {
    result_.algorithm = "none";
    result_.confidence = "high";
    evidence.push_back(fmt::format("{} requests back to back in {:.0f} ms: all admitted",
                                   burst.size(), ms(burst.back().at_ns - burst.front().at_ns)));
    return;
  }
  if (count.admitted == 0) {
    if (target_.fresh_identities())
      throw Halt{fresh_identity_denied()};
    // {id} is the identity within a run: the same one at every step of a probe.
    const std::string id_at = target_.where_written("{id}");
    throw Halt{fmt::format(
        "the first request was denied and its denial carried no hint of when to retry{} (put "
        "{{run}} where the limiter reads its identity, or give --source-address two or more "
        "addresses for a limiter keyed by client address)",
        id_at.empty() ? ""
                      : fmt::format("; {{id}} in {} names the same identity at every step of a "
                                    "probe",
                                    id_at))};
  }
  const int64_t limit = count.admitted;
  const int64_t first_admitted = *count.first_admitted_ns;
  evidence.push_back(fmt::format(
      "{} admitted back to back in {:.1f} ms, request {} denied{}", limit,
      ms(*count.first_denied_ns - first_admitted), limit + 1,
      count.first_hint_ms ? fmt::format(" (retry hint {} ms)", *count.first_hint_ms) : ""));
  if (count.first_hint_ms) {
    // The readmission, and two windows more to confirm it (three without fresh identities).
    const double hint_ns = static_cast<double>(*count.first_hint_ms) * 1e6;
    const double spans = target_.fresh_identities() ? 3.25 : 4.25;
    plan(hint_ns * spans * (1 + k_agreement),
         fmt::format("the first denial's hint says capacity returns in {} ms",
                     *count.first_hint_ms));
  }

  // Phase 2: when does capacity come back? Meanwhile a control identity, drained too but left
  // alone, tells whether the probes' own denials keep the first identity out.
  drain_control(limit, count);
  const Readmission first =
      search(1, first_admitted, *count.last_denied_ns, *count.last_denied_ns, true);
  if (control_.drained_ns != 0)
    result_.denial_counting = false;
  evidence.push_back(fmt::format("capacity came back {:.1f} ms (±{:.1f}) after the first admission",
                                 ms(first.estimate_ns() - first_admitted),
                                 ms(first.uncertainty_ns())));

  // Phase 3: all of it at once (a window), or one request (a bucket)? A sliding log frees the
  // first burst's slots at the pace that burst was admitted: the follow-up leaves once as long
  // after the readmission as the burst took, so that a burst admitted slowly (a loaded
  // machine) and a follow-up sent fast do not read a window as a bucket.
  const int64_t burst_span = *count.first_denied_ns - first_admitted;
  const auto follow_up = send(1, limit, std::max(target_.now_ns(), first.admitted_ns + burst_span));
  const int64_t freed = admitted(follow_up);
  const checks::Family family = checks::family_after_readmission(limit, freed);
  evidence.push_back(fmt::format("right then, {} of a burst of {} admitted: {}", freed, limit,
                                 family == checks::Family::bucket
                                     ? "one request at a time comes back (a bucket or a "
                                       "sliding-window counter)"
                                     : "the whole window comes back at once"));
  if (family == checks::Family::bucket) {
    infer_bucket(limit, first_admitted, first, follow_up);
  } else {
    if (family == checks::Family::unknown) {
      result_.notes.push_back(
          "with a limit of 1 a window and a bucket of 1 admit alike; reported as a window");
    } else {
      schedule_ban_test(limit, first_admitted, first);
    }
    infer_window(limit, first_admitted, first, follow_up, freed);
  }
}

void Sequence::drain_control(int64_t limit, const checks::BurstCount& first) {
  if (target_.distinct_identities() < k_control_identity)
    return;
  // Twice the limit and one: a burst that straddles a window's boundary (a loaded machine
  // spreads it) is admitted up to twice the limit, and still ends denied.
  const auto drained = send(k_control_identity, 2 * limit + 1, target_.now_ns());
  const checks::BurstCount count = checks::count_burst(drained);
  if (count.admitted < limit || !count.last_denied_ns) {
    result_.notes.push_back(
        fmt::format("a second identity's burst admitted {} where the first one's admitted {}: the "
                    "denial-counting control was left out",
                    count.admitted, limit));
    return;
  }
  control_.drained_ns = *count.last_denied_ns;
  admitted_before_denial_ = limit;
  // First asked once capacity should be back (the hint said when), else soon; then at doubling
  // intervals, so that some interval outlasts a window that restarts on every hit.
  const int64_t burst_ns = *first.first_denied_ns - *first.first_admitted_ns;
  control_.first_gap_ns =
      first.first_hint_ms && *first.first_hint_ms > 0
          ? static_cast<int64_t>(static_cast<double>(*first.first_hint_ms) * 1e6 * k_plan_margin) +
                k_timing_slack_ns
          : std::max<int64_t>(10 * k_min_step_ns, 2 * burst_ns);
  control_.active = true;
}

void Sequence::infer_window(int64_t limit, int64_t first_admitted, const Readmission& first,
                            const std::vector<ProbeRequest>& follow_up, int64_t freed) {
  auto& evidence = result_.evidence;
  // The window to come: the follow-up's denial hint names it (a boundary just passed, or a
  // window just opened), else the wait for the first readmission bounds it from below.
  const checks::BurstCount follow_count = checks::count_burst(follow_up);
  const double expected_ns = follow_count.first_hint_ms
                                 ? static_cast<double>(*follow_count.first_hint_ms) * 1e6
                                 : static_cast<double>(first.admitted_ns - first_admitted);
  const double windows = target_.fresh_identities() ? 2.25 : 3.25;
  plan(expected_ns * windows * (1 + k_agreement),
       fmt::format("a window lasts about {:.0f} ms and is confirmed over {} windows more",
                   expected_ns / 1e6, windows));
  // A window after `first`: at least as long as the wait for the first readmission was.
  const int64_t from = std::max(follow_up.back().at_ns,
                                first.admitted_ns + (first.admitted_ns - first_admitted) / 2);
  const Readmission second =
      search(1, first.admitted_ns, from, last_denied(follow_up, first.admitted_ns));
  const int64_t window_guess = second.estimate_ns() - first.admitted_ns;
  evidence.push_back(fmt::format("capacity came back again {:.1f} ms (±{:.1f}) later",
                                 ms(window_guess), ms(second.uncertainty_ns())));
  if (ban_test_forgot(limit)) {
    infer_ban(limit, first, follow_up, second);
    return;
  }

  // The spread test on a fresh identity: one admission, the rest half a window later. The
  // single admission comes a quarter window after the boundary just seen, so that a clock's
  // next boundary (3/4 W after it) is not where a first-hit window ends (W after it). Without
  // fresh identities the same one, once everything it was admitted has left even a sliding
  // window.
  const int spread = target_.fresh_identities() ? 2 : 1;
  const double spread_wait = target_.fresh_identities() ? 0.25 : 1.25;
  const int64_t single_at = second.admitted_ns +
                            static_cast<int64_t>(static_cast<double>(window_guess) * spread_wait) +
                            k_timing_slack_ns;
  if (!target_.fresh_identities()) {
    evidence.push_back(fmt::format(
        "one identity (no {{run}}): waited {:.0f} ms for its window to empty before the spread "
        "test",
        ms(single_at - target_.now_ns())));
  }
  const auto single = send(spread, 1, std::max(single_at, target_.now_ns()));
  if (admitted(single) != 1) {
    throw Halt{target_.fresh_identities()
                   ? fresh_identity_denied()
                   : "the one identity was denied after its window had emptied"};
  }
  const int64_t s0 = single.front().at_ns;
  const auto half_later = send(spread, limit, s0 + window_guess / 2);
  const int64_t second_batch = admitted(half_later);
  std::optional<int64_t> after_readmission;
  std::optional<Readmission> third;
  if (second_batch < limit) {
    third = search(spread, s0, half_later.back().at_ns, last_denied(half_later, s0));
    after_readmission = admitted(send(spread, limit, target_.now_ns()));
  }
  const checks::WindowKind kind = checks::window_kind(limit, second_batch, after_readmission);
  if (!third) {
    evidence.push_back(fmt::format(
        "spread test: 1 admitted, then {} of {} half a window later: a new window had begun "
        "(fixed)",
        second_batch, limit));
  } else {
    evidence.push_back(fmt::format(
        "spread test: 1 admitted, {} of {} half a window later; at the next readmission ({:.1f} "
        "ms after the single one) {} more: {}",
        second_batch, limit, ms(third->estimate_ns() - s0), *after_readmission,
        kind == checks::WindowKind::fixed ? "every slot freed at once (fixed)"
                                          : "only the oldest slot freed (sliding)"));
  }
  // How far a boundary seen through a readmission bracket may be from the true one.
  const int64_t timing =
      std::max(k_timing_slack_ns, static_cast<int64_t>(0.01 * static_cast<double>(window_guess)));
  bool consistent = true;
  bool too_slow = false;  // a fixed window's anchor could not be told
  if (kind == checks::WindowKind::sliding) {
    result_.algorithm = "sliding";
    result_.limit = limit;
    result_.window_ms = std::llround(ms(checks::window_between(kind, first, second)));
    result_.window_tolerance_ms = ms(second.uncertainty_ns() + timing);
    // The single admission left the window one window after it was decided.
    consistent = third && agrees(static_cast<double>(third->estimate_ns() - s0),
                                 static_cast<double>(window_guess));
  } else {
    result_.algorithm = "fixed";
    // Right after a boundary every slot is free: the follow-up burst took all but the probe's.
    result_.limit = freed + 1;
    if (freed + 1 != limit) {
      result_.notes.push_back(
          fmt::format("the first burst crossed a window boundary ({} admitted across it)", limit));
    }
    // Each reading is off by its brackets and by when its requests were decided (within half
    // their send-to-reply time): slow replies widen the tolerance rather than mislead.
    const int64_t anchor_tolerance =
        static_cast<int64_t>(k_anchor_tolerance * static_cast<double>(window_guess)) + timing +
        first.uncertainty_ns() + second.uncertainty_ns() + (third ? third->uncertainty_ns() : 0) +
        latency_of(first_admitted) / 2 + single.front().latency_ns / 2;
    // A clock's boundary comes 3/4 W after the single admission, a first-hit window's end W
    // after it: a tolerance past W/8 cannot tell them apart.
    if (8 * anchor_tolerance > window_guess) {
      too_slow = true;
      result_.notes.push_back(fmt::format(
          "replies took too long to tell a window opened by the first hit from one on the clock "
          "(±{:.0f} ms of a {:.0f} ms window)",
          ms(anchor_tolerance), ms(window_guess)));
    }
    std::optional<int64_t> third_since_single;
    if (third)
      third_since_single = third->estimate_ns() - s0;
    const bool first_hit = checks::first_hit_anchor(
        window_guess, anchor_tolerance, first.estimate_ns() - first_admitted, third_since_single);
    result_.anchor = first_hit ? "first-hit" : "clock";
    if (first_hit) {
      // Every window opens at its first admission: the readmitted probe opened the second.
      result_.window_ms = std::llround(ms(window_guess));
      result_.window_tolerance_ms = ms(second.uncertainty_ns() + timing);
      evidence.push_back(fmt::format(
          "both identities were readmitted one window after their own first admission "
          "({:.1f} and {:.1f} ms): windows open at the first hit, not at the clock's multiples",
          ms(first.estimate_ns() - first_admitted), ms(*third_since_single)));
    } else {
      result_.window_ms = std::llround(ms(checks::window_between(kind, first, second)));
      result_.window_tolerance_ms = ms(first.uncertainty_ns() + second.uncertainty_ns() + timing);
      if (third) {
        // Boundaries are a whole number of windows apart.
        const double windows = static_cast<double>(third->estimate_ns() - first.estimate_ns()) /
                               static_cast<double>(window_guess);
        consistent = std::abs(windows - std::round(windows)) <= k_agreement;
      }
    }
  }
  result_.confidence = consistent && !too_slow ? "high" : "low";
  if (!consistent)
    result_.notes.push_back("the spread test's readmission did not come where the window says");
}

}  // namespace rlcheck::probe
