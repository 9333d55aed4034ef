// The sustained phase: once the first limit is known, a fresh identity sends just under its
// rate for a few of its windows, and a denial the first limit cannot explain is a second,
// longer limit's (checks/second_limit says what the requests mean).

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "checks/second_limit.hpp"
#include "probe/probe_sequence.hpp"

namespace rlcheck::probe {

using engine::Outcome;

namespace {

std::string seconds_text(int64_t ns) {
  return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
}

}  // namespace

bool Sequence::sustained_send_fits(int64_t at_ns) const {
  if (target_.virtual_clock())
    return at_ns - target_.now_ns() <= k_virtual_horizon_ns;
  // The request and its reply end before the deadline, with the probes' own timing to spare.
  return target_.at(at_ns) + std::chrono::nanoseconds(k_timing_slack_ns + k_min_step_ns) <
         deadline_;
}

void Sequence::look_for_second_limit() {
  if (result_.algorithm == "unknown" || result_.algorithm == "none")
    return;
  checks::SecondLimitSearch& second = result_.second.emplace();
  second.runs_before = target_.results().size();
  const std::optional<checks::FirstLimit> first =
      checks::first_limit_of(result_, k_timing_slack_ns);
  if (result_.algorithm == "concurrency" || result_.algorithm == "ban" ||
      result_.algorithm == "slow-down") {
    second.reason = fmt::format(
        "a {} sets no rate to send just under, so no second limit was "
        "looked for",
        result_.algorithm == "ban"         ? "ban"
        : result_.algorithm == "slow-down" ? "slow-down"
                                           : "cap on requests in progress");
    return;
  }
  if (!first) {
    second.reason = fmt::format(
        "a {} gives no steady rate to send just under, so no second limit was looked for",
        result_.algorithm == "sliding-counter" ? "sliding-window counter (its estimate may deny "
                                                 "below its rate)"
                                               : result_.algorithm);
    return;
  }
  if (target_.distinct_identities() < k_sustained_identity) {
    second.reason = fmt::format(
        "looking for a second limit takes an identity no earlier phase used ({{run}}, or {} "
        "--source-address values): none was looked for",
        k_sustained_identity);
    return;
  }
  const double rate = k_sustained_pace * checks::first_rate_per_s(*first);
  const auto step_ns = std::max(k_min_step_ns, static_cast<int64_t>(1e9 / rate));
  const int64_t span_ns = checks::first_span_ns(*first);
  const int64_t longest_ns = k_sustained_spans * span_ns;
  const int64_t start_ns = target_.now_ns() + k_min_step_ns;
  int64_t phase_ns = longest_ns;
  if (!target_.virtual_clock()) {
    const int64_t left_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline_ - target_.at(start_ns))
            .count() -
        k_timing_slack_ns - step_ns;
    phase_ns = std::min(phase_ns, left_ns);
  }
  if (phase_ns < k_least_sustained_spans * span_ns) {
    const int64_t seconds =
        whole_seconds_above(static_cast<double>(elapsed_ns() + longest_ns + step_ns));
    second.max_time_needed_ms = seconds * 1000;
    second.reason = fmt::format(
        "the budget left no room to look for a second limit ({} sustained at {:.3g}/s); "
        "--max-time {}s would",
        seconds_text(longest_ns), rate, seconds);
    return;
  }
  second.rate_per_s = rate;

  // Paced from each request's instant, never catching up: a late request does not bunch the
  // next ones into more than the first limit allows.
  std::vector<ProbeRequest> phase;
  std::optional<int64_t> second_denial_ns;
  std::optional<int64_t> hint_ms;
  std::string stopped;
  int64_t due = start_ns;
  try {
    while (true) {
      if (!second_denial_ns && due > start_ns + phase_ns)
        break;
      if (!sustained_send_fits(due)) {
        stopped = "the budget ended the phase";
        break;
      }
      const ProbeRequest request =
          send(k_sustained_identity, 1, std::max(due, target_.now_ns())).front();
      phase.push_back(request);
      if (request.outcome == Outcome::allowed && second_denial_ns)
        break;  // readmitted: the second limit's window is known
      if (request.outcome == Outcome::denied && !second_denial_ns &&
          checks::first_limit_had_room(*first, std::span(phase).first(phase.size() - 1), request)) {
        second_denial_ns = request.at_ns;
        hint_ms = request.retry_ms;
        // A hint that puts the readmission past the budget: the window is read off it.
        if (hint_ms && *hint_ms > 0 &&
            !sustained_send_fits(request.at_ns + *hint_ms * 1'000'000 + step_ns)) {
          stopped = "the budget ends before the second limit's hint";
          break;
        }
      }
      due = request.at_ns + step_ns;
    }
  } catch (const Halt& halt) {
    stopped = halt.reason;
  }
  conclude_second_limit(*first, phase, stopped);
}

void Sequence::conclude_second_limit(const checks::FirstLimit& first,
                                     const std::vector<ProbeRequest>& phase,
                                     const std::string& stopped) {
  checks::SecondLimitSearch& second = *result_.second;
  const checks::SustainedReading reading = checks::read_sustained(first, phase);
  second.requests = reading.requests;
  second.admitted = reading.admitted;
  if (!phase.empty())
    second.span_ms = std::llround(ms(phase.back().at_ns - phase.front().at_ns));
  // The rate it was sent at, which a slow limiter's replies may have held below the pace.
  if (phase.size() >= 2 && second.span_ms > 0) {
    second.rate_per_s = std::min(second.rate_per_s, static_cast<double>(phase.size() - 1) * 1e3 /
                                                        static_cast<double>(second.span_ms));
  }
  if (reading.explained_denials > 0) {
    result_.notes.push_back(fmt::format(
        "the sustained phase met the first limit {} times (its requests came closer than paced: "
        "a busy machine?); those denials were the first limit's",
        reading.explained_denials));
  }
  if (!reading.second_denial_ns) {
    second.outcome = "none-seen";
    result_.evidence.push_back(fmt::format(
        "sustained at {:.3g}/s on a fresh identity: {} of {} admitted over {}, no denial the "
        "first limit could not explain{}",
        second.rate_per_s, reading.admitted, reading.requests,
        seconds_text(second.span_ms * 1'000'000), stopped.empty() ? "" : " (" + stopped + ")"));
    result_.notes.push_back(fmt::format(
        "no second limit within {} requests over {}: a longer limit that allows more than that "
        "was not ruled out",
        reading.admitted, seconds_text(second.span_ms * 1'000'000)));
    return;
  }
  const int64_t limit = reading.admitted_before_second;
  const int64_t denied_after_ns = *reading.second_denial_ns - *reading.first_admitted_ns;
  result_.evidence.push_back(fmt::format(
      "sustained at {:.3g}/s on a fresh identity: {} admitted over {}, then a denial the first "
      "limit had room for (retry hint {})",
      second.rate_per_s, limit, seconds_text(denied_after_ns),
      reading.second_hint_ms ? fmt::format("{} ms", *reading.second_hint_ms) : "none"));
  second.limit = limit;
  const std::optional<checks::SecondWindow> window = checks::second_window(reading);
  if (!window) {
    second.outcome = "found";
    result_.notes.push_back(fmt::format(
        "a second limit of {} over more than {} was found, but the budget ended before it "
        "admitted again and its denial gave no hint: no flags (those of the first limit alone "
        "would fail against it)",
        limit, seconds_text(denied_after_ns)));
    return;
  }
  if (window->window_ns <= denied_after_ns || window->window_ns <= checks::first_span_ns(first)) {
    second.outcome = "unclear";
    second.limit.reset();
    second.reason = fmt::format(
        "a denial the first limit had room for came after {} admissions, but capacity came back "
        "{} after the phase's first admission: no longer window reads from it",
        limit, seconds_text(window->window_ns));
    result_.notes.push_back(second.reason);
    return;
  }
  second.outcome = "found";
  second.window_ms = std::llround(ms(window->window_ns));
  second.window_tolerance_ms = ms(window->tolerance_ns + k_timing_slack_ns);
  second.window_from_hint = window->from_hint;
  if (window->from_hint) {
    result_.confidence = "low";
    result_.notes.push_back(fmt::format(
        "the second limit's window ({} ms) is read off its denial's hint, not measured: {}",
        *second.window_ms, stopped.empty() ? "the budget ended first" : stopped));
  } else {
    result_.evidence.push_back(fmt::format(
        "admitted again {:.1f} ms (±{:.1f}) after the phase's first admission: a second limit of "
        "{} per {:.0f} ms, read as a sliding window",
        ms(window->window_ns), ms(window->tolerance_ns), limit, ms(window->window_ns)));
  }
}

}  // namespace rlcheck::probe
