// The slow-down reading: the first burst, sent one at a time, was all admitted and its replies
// grew a step each past the first N (checks/slow_down_probe). A batch sent at once on an
// identity of its own shows how far the delays grow (the longest delay); the first identity,
// asked again at widening pauses until it is answered at full speed, brackets the window; and
// trials on fresh identities, each counted past N at once and asked once a gap later, narrow
// that bracket. Each request was counted between its send and its reply, and the bounds read
// every instant the way that widens them.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "probe/probe_sequence.hpp"

namespace rlcheck::probe {

using engine::Outcome;

namespace {

int64_t sent_at(const ProbeRequest& request) {
  return request.at_ns - request.latency_ns / 2;
}

int64_t replied_at(const ProbeRequest& request) {
  return request.at_ns + (request.latency_ns + 1) / 2;
}

// The latencies of `requests`, all admitted; unset when one was not.
std::optional<std::vector<int64_t>> admitted_latencies(const std::vector<ProbeRequest>& requests) {
  std::vector<int64_t> latencies;
  for (const ProbeRequest& request : requests) {
    if (request.outcome != Outcome::allowed)
      return std::nullopt;
    latencies.push_back(request.latency_ns);
  }
  return latencies;
}

constexpr const char* k_not_only_slowed =
    "replies slowed down with the count, but a request was then denied: not a slow-down alone";

}  // namespace

void Sequence::infer_slow_down(const std::vector<ProbeRequest>& one_at_a_time) {
  auto& evidence = result_.evidence;
  const std::optional<checks::SlowDownSteps> serial =
      checks::read_slow_down(*admitted_latencies(one_at_a_time));
  evidence.push_back(fmt::format(
      "{} sent one at a time, none denied: the first {} answered in {:.1f} ms, each of the {} "
      "after them {:.1f} ms (±{:.1f}) later than the one before: requests are slowed down, not "
      "denied",
      one_at_a_time.size(), serial->after, ms(serial->unloaded_ns), serial->growing,
      serial->step_ns / 1e6, serial->step_tolerance_ns / 1e6));
  checks::SlowDownSteps steps = *serial;
  bool consistent = true;

  // The longest delay: a batch sent at once on an identity of its own, its delays by rank
  // reaching k_slow_batch_span_ns.
  if (target_.distinct_identities() > k_slow_down_identity) {
    const auto past = std::clamp<int64_t>(
        static_cast<int64_t>(std::ceil(static_cast<double>(k_slow_batch_span_ns) / steps.step_ns)) +
            3,
        4, std::max<int64_t>(4, k_max_queue_burst - steps.after));
    plan(static_cast<double>(past) * steps.step_ns * (1 + 2 * k_agreement),
         fmt::format("a batch of {} at once is slowed down {:.0f} ms a request", steps.after + past,
                     steps.step_ns / 1e6));
    const auto batch = send(k_slow_down_identity, steps.after + past, target_.now_ns(), true);
    std::optional<std::vector<int64_t>> ranked = admitted_latencies(batch);
    if (!ranked)
      throw Halt{k_not_only_slowed};
    std::sort(ranked->begin(), ranked->end());
    const std::optional<checks::SlowDownSteps> at_once = checks::read_slow_down(*ranked);
    if (!at_once) {
      consistent = false;
      result_.notes.push_back(fmt::format(
          "{} sent at once on an identity of their own: their replies by rank do not grow a "
          "step each: the longest delay was not read",
          batch.size()));
    } else {
      evidence.push_back(fmt::format(
          "{} sent at once on an identity of their own, none denied: ranked by their replies, {} "
          "at full speed, then {} each {:.1f} ms (±{:.1f}) later than the one before{}",
          batch.size(), at_once->after, at_once->growing, at_once->step_ns / 1e6,
          at_once->step_tolerance_ns / 1e6,
          at_once->cap_ns
              ? fmt::format(", then {} held {:.0f} ms (±{:.0f}) at most: the longest "
                            "delay",
                            static_cast<int64_t>(batch.size()) - at_once->after - at_once->growing,
                            *at_once->cap_ns / 1e6, at_once->cap_tolerance_ns / 1e6)
              : std::string(": no longest delay reached")));
      if (at_once->after != serial->after ||
          std::abs(at_once->step_ns - serial->step_ns) >
              at_once->step_tolerance_ns + serial->step_tolerance_ns) {
        consistent = false;
        result_.notes.push_back(fmt::format(
            "one at a time {} went at full speed and each later one {:.1f} ms more; at once {} "
            "and {:.1f} ms",
            serial->after, serial->step_ns / 1e6, at_once->after, at_once->step_ns / 1e6));
      }
      if (at_once->step_tolerance_ns < steps.step_tolerance_ns) {
        steps.step_ns = at_once->step_ns;
        steps.step_tolerance_ns = at_once->step_tolerance_ns;
      }
      steps.cap_ns = at_once->cap_ns;
      steps.cap_tolerance_ns = at_once->cap_tolerance_ns;
    }
  }

  // The window: the first identity, asked again at widening pauses, until it is answered at
  // full speed (its count restarted).
  const int64_t first_sent = sent_at(one_at_a_time.front());
  const int64_t first_replied = replied_at(one_at_a_time.front());
  ProbeRequest slowed = one_at_a_time.back();
  std::optional<ProbeRequest> fast;
  while (!fast) {
    const int64_t due =
        checks::next_probe_ns(first_sent, replied_at(slowed), step_ratio_, k_min_step_ns);
    const ProbeRequest probe = send(1, 1, std::max(due, target_.now_ns())).front();
    if (probe.outcome != Outcome::allowed)
      throw Halt{k_not_only_slowed};
    if (checks::unloaded_reply(steps, probe.latency_ns))
      fast = probe;
    else
      slowed = probe;
  }
  // Slowed: still counted in the window the first request opened; fast: past it.
  int64_t low = sent_at(slowed) - first_replied;
  int64_t high = replied_at(*fast) - first_sent;
  evidence.push_back(fmt::format(
      "the first identity, asked again at widening pauses, was still slowed down {:.0f} ms after "
      "its first request and answered at full speed {:.0f} ms after it: its count restarted "
      "between",
      ms(low), ms(high)));
  if (!time_slow_down_window(steps, low, high)) {
    throw Halt{fmt::format(
        "replies slowed down with the count and the count restarted within {:.0f} to {:.0f} ms "
        "of the first request, but identities counted past N at once did not restart one "
        "window after their first request (a sliding window's count, which falls request by "
        "request, or a window on the clock): the window was not told",
        ms(low), ms(high))};
  }

  result_.algorithm = "slow-down";
  result_.anchor = "first-hit";
  result_.limit = steps.after;
  result_.window_ms = std::llround(ms(low + (high - low) / 2));
  result_.window_tolerance_ms = ms((high - low) / 2 + k_timing_slack_ns);
  result_.delay_step_ms = steps.step_ns / 1e6;
  result_.delay_step_tolerance_ms = steps.step_tolerance_ns / 1e6;
  if (steps.cap_ns) {
    result_.max_delay_ms = *steps.cap_ns / 1e6;
    result_.max_delay_tolerance_ms = steps.cap_tolerance_ns / 1e6;
  } else {
    consistent = false;
  }
  result_.notes.push_back(
      "every identity timed was answered at full speed again one window after its own first "
      "request: read as windows opened by a client's first request (first-hit), the kind whose "
      "contract holds for what was seen");
  result_.confidence = consistent ? "high" : "low";
}

bool Sequence::time_slow_down_window(const checks::SlowDownSteps& steps, int64_t& low_ns,
                                     int64_t& high_ns) {
  if (target_.distinct_identities() <= k_first_slow_trial_identity + k_slow_trials) {
    result_.notes.push_back(
        "the window was bracketed by the first identity alone: narrowing it takes fresh "
        "identities ({run})");
    return true;
  }
  struct Trial {
    int identity = 0;
    int64_t opened_sent = 0;     // the window opened after this...
    int64_t opened_replied = 0;  // ...and by this
    int64_t gap = 0;
  };
  // The first trial just below the bracket (still slowed, whatever the window), the others
  // spread across it.
  const int64_t spacing = std::max<int64_t>(k_min_step_ns, (high_ns - low_ns) / k_slow_trials);
  plan(static_cast<double>(k_slow_trials) *
               (steps.step_ns + static_cast<double>(k_timing_slack_ns)) * (1 + 2 * k_agreement) +
           static_cast<double>(high_ns),
       fmt::format("timing a window of {:.0f} to {:.0f} ms takes {} identities asked once each "
                   "about a window after they were counted",
                   ms(low_ns), ms(high_ns), k_slow_trials));
  std::vector<Trial> trials;
  for (int j = 0; j < k_slow_trials; ++j) {
    const int identity = k_first_slow_trial_identity + j;
    const auto opened = send(identity, steps.after + 1, target_.now_ns(), true);
    const std::optional<std::vector<int64_t>> latencies = admitted_latencies(opened);
    if (!latencies)
      throw Halt{k_not_only_slowed};
    // Counted past N: the slowest of them was slowed down.
    if (checks::unloaded_reply(steps, *std::max_element(latencies->begin(), latencies->end())))
      continue;
    int64_t sent = opened.front().at_ns;
    int64_t replied = replied_at(opened.front());
    for (const ProbeRequest& request : opened) {
      sent = std::min(sent, sent_at(request));
      replied = std::min(replied, replied_at(request));
    }
    trials.push_back(
        {identity, sent, replied, std::max<int64_t>(0, low_ns - spacing + j * spacing)});
  }
  int64_t low = low_ns;
  int64_t high = high_ns;
  for (const Trial& trial : trials) {
    const ProbeRequest probe =
        send(trial.identity, 1, std::max(trial.opened_sent + trial.gap, target_.now_ns())).front();
    if (probe.outcome != Outcome::allowed)
      throw Halt{k_not_only_slowed};
    if (checks::unloaded_reply(steps, probe.latency_ns))
      high = std::min(high, replied_at(probe) - trial.opened_sent);
    else
      low = std::max(low, sent_at(probe) - trial.opened_replied);
  }
  if (low >= high)
    return false;
  result_.evidence.push_back(fmt::format(
      "{} identities, each counted past {} at once and asked once a gap later: slowed down "
      "up to {:.0f} ms after they were counted, at full speed from {:.0f} ms",
      trials.size(), steps.after, ms(low), ms(high)));
  low_ns = low;
  high_ns = high;
  return true;
}

}  // namespace rlcheck::probe
