#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "checks/step_probe.hpp"
#include "probe/probe_sequence.hpp"

namespace rlcheck::probe {

using engine::Outcome;

namespace {

// A measured rate to three significant digits: 0.0167 per second (1 a minute) keeps what two
// decimals would round to 0.02 (1 every 50 s).
double three_digits(double rate) {
  return std::stod(fmt::format("{:.3g}", rate));
}

const char* refill_name(checks::Refill refill) {
  switch (refill) {
    case checks::Refill::token_bucket:
      return "a token bucket";
    case checks::Refill::counter_first_hit:
      return "a sliding-window counter whose windows open at the first hit";
    case checks::Refill::counter_clock:
      return "a sliding-window counter on the clock";
    case checks::Refill::unknown:
      break;
  }
  return "none of them";
}

}  // namespace

void Sequence::infer_bucket(int64_t burst, int64_t first_admitted, const Readmission& first,
                            const std::vector<ProbeRequest>& follow_up) {
  const int64_t token_ns = first.estimate_ns() - first_admitted;
  plan(static_cast<double>(token_ns) * k_refill_readmissions * (1 + k_agreement),
       fmt::format("a request comes back every {:.1f} ms and {} are timed", ms(token_ns),
                   k_refill_readmissions));
  // The next single readmission, searched: a counter on the clock may have given back its
  // first request anywhere in its window, so only the second one says how far apart they are.
  const Readmission next =
      search(1, first_admitted, follow_up.back().at_ns, last_denied(follow_up, first.admitted_ns));
  const int64_t apart_ns = std::max<int64_t>(k_min_step_ns, next.admitted_ns - first.admitted_ns);
  const int64_t step = std::max(k_min_step_ns, apart_ns / probes_per_token_);
  plan(static_cast<double>(apart_ns) * k_refill_readmissions * (1 + k_agreement),
       fmt::format("a request comes back every {:.1f} ms and {} are timed", ms(apart_ns),
                   k_refill_readmissions));
  // The search's bracket is coarser than a tenth of an interval: timed from the next one on.
  std::vector<int64_t> readmissions;
  std::vector<ProbeRequest> timed;
  int64_t due = next.admitted_ns + step;
  while (static_cast<int>(readmissions.size()) < k_refill_readmissions) {
    const ProbeRequest probe = send(1, 1, std::max(due, target_.now_ns())).front();
    timed.push_back(probe);
    if (probe.outcome == Outcome::allowed)
      readmissions.push_back(probe.at_ns);
    due = std::max(due + step, probe.at_ns + k_min_step_ns);
  }
  // A bucket refilled smoothly gives back one probe per token, never two in a row this close.
  std::vector<ProbeRequest> from_next{{next.admitted_ns, Outcome::allowed, std::nullopt, 0}};
  from_next.insert(from_next.end(), timed.begin(), timed.end());
  if (checks::admits_in_a_row(from_next)) {
    infer_steps(burst, next, std::move(timed), step);
    return;
  }
  double refill = *checks::refill_from(readmissions);
  // Where the true rate can lie: each token came between the denial before its admission and
  // the admission, as those requests were decided (send to reply: a loaded machine's late
  // replies widen it), on the limiter's millisecond clock.
  std::optional<checks::RateInterval> interval =
      checks::refill_interval(timed, k_limiter_resolution_ns);
  if (!interval) {
    // No denial before the second readmission: nothing bounds the tokens' instants, so no
    // round value can be trusted (the measured one goes into the flags, confidence low).
    interval = checks::RateInterval::around(refill, 0);
  }
  refill = std::clamp(refill, interval->low_per_s, interval->high_per_s);
  const double tolerance = std::max(refill / interval->low_per_s - 1,
                                    interval->high_per_s == std::numeric_limits<double>::infinity()
                                        ? 1.0
                                        : 1 - refill / interval->high_per_s);
  result_.evidence.push_back(fmt::format(
      "probed every {:.1f} ms, single requests came back {:.1f} ms apart ({} in {:.1f} ms): "
      "{:.2f} per second, between {:.3g} and {:.3g} by the brackets",
      ms(step), ms(readmissions.back() - readmissions.front()) / (k_refill_readmissions - 1),
      readmissions.size(), ms(readmissions.back() - readmissions.front()), refill,
      interval->low_per_s, interval->high_per_s));

  // A bucket drained from full gets its first token back one interval after its first
  // admission; a sliding-window counter only when its window ends.
  const auto interval_ns = static_cast<int64_t>(1e9 / refill);
  const checks::Refill by_first =
      checks::refill_by_first_readmission(burst, interval_ns, token_ns, k_agreement);
  result_.evidence.push_back(fmt::format(
      "the first came back {:.1f} ms after the first admission, {:.2f} intervals: alone, that "
      "reads as {}",
      ms(token_ns), static_cast<double>(token_ns) / static_cast<double>(interval_ns),
      refill_name(by_first)));
  // Where single requests come back every few ms, the probes' own timing blurs where the first
  // came: no phase is read, and the reading stays a bucket's as it always was.
  const bool timed_finely = interval_ns >= k_finest_interval_ns;
  const std::optional<checks::Refill> by_phase =
      timed_finely ? phase_test(burst, interval_ns, first) : std::nullopt;
  checks::Refill refill_kind = by_first;
  bool sure = by_first == checks::Refill::token_bucket;  // as sure as before the phase test
  if (by_phase && *by_phase != checks::Refill::unknown) {
    refill_kind = *by_phase;
    // A counter on the clock may give its first request back at any point of its window, one
    // interval included; the others have one place each.
    sure = by_first == *by_phase ||
           (*by_phase == checks::Refill::counter_clock && by_first != checks::Refill::unknown);
  } else if (!timed_finely || target_.distinct_identities() >= k_spread_identity) {
    // The phase test was left out or could not tell: a counter is not claimed on identity 1's
    // reading alone where a second identity could have confirmed it.
    refill_kind = checks::Refill::token_bucket;
    sure = sure && !by_phase;
    if (!timed_finely) {
      result_.notes.push_back(fmt::format(
          "single requests come back every {:.1f} ms, too often to time a window's phase: a "
          "sliding-window counter would read alike",
          ms(interval_ns)));
    } else if (by_first != checks::Refill::token_bucket) {
      result_.notes.push_back(
          "identity 1 alone reads as a sliding-window counter, but the phase test did not "
          "confirm it");
    }
  }
  result_.confidence = sure ? "high" : "low";

  if (refill_kind == checks::Refill::counter_first_hit ||
      refill_kind == checks::Refill::counter_clock) {
    // Admitted while prev * (1 - f) + curr < L: drained, one request every W / L.
    result_.algorithm = "sliding-counter";
    result_.limit = burst;
    result_.anchor = refill_kind == checks::Refill::counter_first_hit ? "first-hit" : "clock";
    const double window_ms = static_cast<double>(burst) * 1e3 / refill;
    result_.window_ms = std::llround(window_ms);
    result_.window_tolerance_ms = window_ms * tolerance;  // the rate's, on its inverse
    if (!sure)
      result_.notes.push_back("one identity only: no phase test confirmed the counter");
    return;
  }
  result_.algorithm = "token-bucket";
  result_.burst = burst;
  result_.refill_per_s = three_digits(refill);
  result_.refill_interval = *interval;
  if (by_first != checks::Refill::token_bucket) {
    result_.notes.push_back(fmt::format(
        "the first readmission came {:.1f} ms after the first admission where one token "
        "takes {:.1f} ms",
        ms(token_ns), 1e3 / refill));
  } else if (!by_phase && timed_finely) {
    result_.notes.push_back(
        "a sliding-window counter on the clock whose boundary came one interval after the "
        "drain would look alike; a second identity would tell (the phase test)");
  }
  result_.notes.push_back(
      "GCRA admits exactly as a token bucket of the same burst and refill (each frees one "
      "request every 1/refill, up to the burst): from outside they are one contract, "
      "reported as token-bucket");
}

void Sequence::infer_steps(int64_t burst, const Readmission& next, std::vector<ProbeRequest> timed,
                           int64_t step_ns) {
  const int64_t apart_ns = step_ns * probes_per_token_;
  plan(static_cast<double>(apart_ns) * 2 * (1 + k_agreement),
       fmt::format("requests come back in runs about {:.1f} ms apart, and a whole run is timed",
                   ms(apart_ns)));
  std::vector<ProbeRequest> requests{{next.admitted_ns, Outcome::allowed, std::nullopt, 0}};
  requests.insert(requests.end(), timed.begin(), timed.end());
  std::optional<checks::StepReading> steps = checks::read_steps(next.last_denied_ns, requests);
  int64_t due = requests.back().at_ns + step_ns;
  // Two intervals more at the most, as planned.
  for (int64_t left = 2 * probes_per_token_ + 2; !steps && left > 0; --left) {
    const ProbeRequest probe = send(1, 1, std::max(due, target_.now_ns())).front();
    requests.push_back(probe);
    due = std::max(due + step_ns, probe.at_ns + k_min_step_ns);
    steps = checks::read_steps(next.last_denied_ns, requests);
  }
  if (!steps) {
    throw Halt{fmt::format(
        "once drained, probes {:.1f} ms apart were admitted in a row, but no second run of them "
        "came within two of their intervals",
        ms(step_ns))};
  }
  // Each run began between the denial before it and its first admission, decided within half
  // their send-to-reply times, on the limiter's millisecond clock.
  const int64_t slack = k_timing_slack_ns + k_limiter_resolution_ns;
  const checks::Bracket interval{steps->interval.low_ns - slack, steps->interval.high_ns + slack};
  const double interval_ms = ms(interval.mid_ns());
  result_.evidence.push_back(fmt::format(
      "probed every {:.1f} ms once drained, requests came back {} in a row, then none until {} "
      "more {:.0f} to {:.0f} ms later: {} tokens at each tick, not one at a time",
      ms(step_ns), steps->first_tokens, steps->tokens, ms(interval.low_ns), ms(interval.high_ns),
      steps->tokens));
  result_.algorithm = "token-bucket";
  result_.burst = burst;
  result_.step_tokens = steps->tokens;
  result_.step_interval_ms = std::llround(interval_ms);
  result_.step_interval_tolerance_ms = ms(interval.high_ns - interval.low_ns) / 2;
  const auto tokens = static_cast<double>(steps->tokens);
  result_.refill_per_s = three_digits(tokens * 1e3 / interval_ms);
  result_.refill_interval = {tokens * 1e9 / static_cast<double>(interval.high_ns),
                             interval.low_ns > 0
                                 ? tokens * 1e9 / static_cast<double>(interval.low_ns)
                                 : std::numeric_limits<double>::infinity()};
  result_.confidence = steps->first_tokens == steps->tokens ? "high" : "low";
  if (steps->first_tokens != steps->tokens) {
    result_.notes.push_back(fmt::format("the first run admitted {} and the second {}",
                                        steps->first_tokens, steps->tokens));
  }
  result_.notes.push_back(
      "where the ticks fall is not read: --refill K/I,steps is judged whatever their phase");
}

std::optional<checks::Refill> Sequence::phase_test(int64_t limit, int64_t interval_ns,
                                                   const Readmission& first) {
  if (target_.distinct_identities() < k_spread_identity || limit < 2)
    return std::nullopt;
  const int64_t window_ns = limit * interval_ns;
  // Were it a counter on the clock, the first readmission was a boundary: boundaries follow
  // every window from it. Start now when the next one falls clear of the burst, of one interval
  // and of one window after the start, else halfway between those two.
  const auto clear = [](int64_t a, int64_t b) {
    return std::llabs(a - b) > static_cast<int64_t>(0.15 * static_cast<double>(a + b));
  };
  int64_t start = target_.now_ns() + k_min_step_ns;
  int64_t boundary_in =
      checks::phase_test_start_ns(first.estimate_ns(), window_ns, 0, start) - start;
  // The burst must not straddle the boundary either.
  const bool clear_of_burst = boundary_in > interval_ns / 4 + 10 * k_min_step_ns;
  if (!clear_of_burst || !clear(boundary_in, interval_ns) || !clear(boundary_in, window_ns)) {
    boundary_in = (limit + 1) * interval_ns / 2;
    start = checks::phase_test_start_ns(first.estimate_ns(), window_ns, boundary_in, start);
  }
  const auto longest =
      static_cast<double>(std::max({boundary_in, window_ns}) + (start - target_.now_ns()));
  if (!fits(longest * (1 + 2 * k_agreement))) {
    result_.notes.push_back("the budget left no room for the phase test on a second identity");
    return std::nullopt;
  }
  const auto drained = send(k_spread_identity, limit + 1, start);
  const checks::BurstCount count = checks::count_burst(drained);
  if (count.admitted != limit || !count.last_denied_ns) {
    result_.notes.push_back(fmt::format(
        "phase test: the second identity's burst admitted {} where the first one's admitted {}",
        count.admitted, limit));
    return std::nullopt;
  }
  const int64_t s0 = *count.first_admitted_ns;
  const int64_t predicted_boundary = start + boundary_in;
  // None of the three gives anything back before the earliest prediction (less its
  // tolerance): the search starts there.
  const auto earliest = static_cast<int64_t>(
      (1 - 2 * k_agreement) * static_cast<double>(std::min(interval_ns, predicted_boundary - s0)));
  const Readmission back = search(
      k_spread_identity, s0, std::max(*count.last_denied_ns, s0 + earliest), *count.last_denied_ns);
  const int64_t readmitted_in = back.estimate_ns() - s0;
  const int64_t slack =
      back.uncertainty_ns() + first.uncertainty_ns() + k_timing_slack_ns + k_min_step_ns;
  const checks::Refill kind = checks::refill_by_phase(limit, interval_ns, predicted_boundary - s0,
                                                      readmitted_in, k_agreement, slack);
  result_.evidence.push_back(fmt::format(
      "phase test: a second identity came back {:.1f} ms (±{:.1f}) after its first admission, "
      "where a bucket gives one back after {:.1f}, a counter opened by the first hit after "
      "{:.1f} and one on the clock at the boundary {:.1f} ms in: {}",
      ms(readmitted_in), ms(back.uncertainty_ns()), ms(interval_ns), ms(window_ns),
      ms(predicted_boundary - s0), refill_name(kind)));
  return kind;
}

void Sequence::infer_queue(const std::vector<ProbeRequest>& one_by_one) {
  auto& evidence = result_.evidence;
  const int64_t unloaded = one_by_one.front().latency_ns;
  std::vector<int64_t> waits;
  for (size_t i = 1; i < one_by_one.size(); ++i)
    waits.push_back(one_by_one[i].latency_ns);
  std::sort(waits.begin(), waits.end());
  const int64_t typical = waits[waits.size() / 2];
  evidence.push_back(fmt::format(
      "{} sent one by one, none denied: the first replied in {:.1f} ms, the others after about "
      "{:.1f} ms each: requests wait instead of being denied",
      one_by_one.size(), ms(unloaded), ms(typical)));
  if (target_.distinct_identities() < k_queue_identity + 5) {
    throw Halt{
        "requests wait instead of being denied (a queue), and telling its rate and size needs "
        "bursts on fresh identities (put {run} where the limiter reads its identity)"};
  }
  // Bursts sent at once, each on a fresh identity, doubling until one is denied: the queue's
  // rate from how the waits grow along the burst, its size from where denials begin.
  int identity = k_queue_identity;
  for (int64_t size = 2 * k_first_chunk;; size *= 2, ++identity) {
    plan(static_cast<double>(size) * static_cast<double>(typical) * (1 + 2 * k_agreement),
         fmt::format("a burst of {} waits about {:.1f} ms a request", size, ms(typical)));
    const auto burst = send(identity, size, target_.now_ns(), true);
    const std::optional<checks::QueueFit> fit = checks::fit_queue(burst);
    if (!fit) {
      throw Halt{fmt::format(
          "requests wait instead of being denied, but the waits of {} sent at once do not grow "
          "along the burst as a queue's do",
          size)};
    }
    evidence.push_back(fmt::format(
        "{} sent at once: {} admitted, {} denied; ranked by their waits, each admitted one "
        "waited {:.1f} ms more than the one before ({:.2f} per second), {} waited at all",
        size, static_cast<int64_t>(burst.size()) - fit->denied, fit->denied, 1e3 / fit->rate_per_s,
        fit->rate_per_s, fit->waited));
    if (fit->queue || 2 * size > k_max_queue_burst) {
      result_.algorithm = "queue";
      result_.refill_per_s = three_digits(fit->rate_per_s);
      result_.refill_interval = checks::RateInterval::around(
          fit->rate_per_s, std::max(fit->rate_tolerance, k_agreement / 2));
      result_.queue = fit->queue;
      const bool agrees_one_by_one =
          agrees(static_cast<double>(typical - unloaded), 1e9 / fit->rate_per_s);
      result_.confidence = fit->queue && agrees_one_by_one ? "high" : "low";
      if (!fit->queue) {
        result_.notes.push_back(fmt::format(
            "nothing was denied in a burst of {}: the queue holds {} at least", size, fit->waited));
      }
      if (!agrees_one_by_one) {
        result_.notes.push_back(fmt::format(
            "one by one, requests waited {:.1f} ms where the burst says one leaves every {:.1f} ms",
            ms(typical - unloaded), 1e3 / fit->rate_per_s));
      }
      return;
    }
  }
}

}  // namespace rlcheck::probe
