#include "app/probe_command.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "engine/interrupt.hpp"
#include "runner/advertised_params.hpp"

namespace rlcheck::app {
namespace {

using checks::ProbeRequest;
using checks::Readmission;
using engine::Outcome;

constexpr double k_step_ratio = 0.04;             // a readmission is found within 4 % of its time
constexpr int64_t k_min_step_ns = 1'000'000;      // probes never closer than 1 ms
constexpr int64_t k_first_chunk = 8;              // the burst doubles from here...
constexpr int64_t k_max_burst = 1016;             // ...up to 8 + 16 + ... + 512 requests
constexpr int k_refill_readmissions = 5;          // tokens timed to measure the refill
constexpr int64_t k_probes_per_token = 10;        // probes per refill interval while timing them
constexpr double k_agreement = 0.10;              // cross-checks agree within 10 %
constexpr double k_anchor_tolerance = 0.05;       // a first-hit readmission lands within 5 % of W
constexpr double k_plan_margin = 1.25;            // a suggested --max-time leaves this much room
constexpr int64_t k_timing_slack_ns = 2'000'000;  // the probes' own timing, on any duration

// Ends the sequence: the deadline, an errored request, Ctrl-C.
struct Halt {
  std::string reason;
};

int64_t admitted(const std::vector<ProbeRequest>& requests) {
  return std::count_if(requests.begin(), requests.end(),
                       [](const ProbeRequest& r) { return r.outcome == Outcome::allowed; });
}

// The last denial of `requests`, else `fallback`.
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

// Seconds, rounded up: the --max-time that would cover `ns` of probing.
int64_t whole_seconds_above(double ns) {
  return static_cast<int64_t>(std::ceil(ns * k_plan_margin / 1e9));
}

class Sequence {
 public:
  Sequence(ProbeTarget& target, ProbeTarget::Clock::time_point started,
           ProbeTarget::Clock::time_point deadline)
      : target_(target), started_(started), deadline_(deadline) {}

  checks::InferredContract run() {
    try {
      infer();
    } catch (const Halt& halt) {
      result_.algorithm = "unknown";
      result_.confidence = "low";
      result_.limit.reset();
      result_.window_ms.reset();
      result_.burst.reset();
      result_.refill_per_s.reset();
      result_.anchor.reset();
      result_.reason = halt.reason;
      if (budget_halt_)
        note_queueing();
    }
    return result_;
  }

 private:
  // The budget is checked before every send: a send due after the deadline never leaves, and
  // the requests of one that does are timed out by the deadline (ProbeTarget::send).
  std::vector<ProbeRequest> send(int identity, int64_t count, int64_t at_ns) {
    if (engine::interrupted())
      throw Halt{"interrupted"};
    // Each request of the batch needs a millisecond of the budget at least.
    if (target_.at(at_ns) + std::chrono::milliseconds(count) > deadline_) {
      budget_halt_ = true;
      throw Halt{"--max-time ran out before the probe could tell"};
    }
    auto requests = target_.send(identity, count, target_.at(at_ns), deadline_);
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

  int64_t elapsed_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(ProbeTarget::Clock::now() -
                                                                started_)
        .count();
  }

  // Plans from what is known: when `more_ns` of probing are still needed and the budget does
  // not hold them, stop now, naming the --max-time that would do, rather than wait to fail.
  void plan(double more_ns, const std::string& because) {
    const auto left = deadline_ - ProbeTarget::Clock::now();
    if (more_ns <= static_cast<double>(std::chrono::nanoseconds(left).count()))
      return;
    const int64_t seconds = whole_seconds_above(static_cast<double>(elapsed_ns()) + more_ns);
    result_.max_time_needed_ms = seconds * 1000;
    budget_halt_ = true;
    throw Halt{fmt::format(
        "--max-time is too short: {}, so telling the contract takes about {:.1f} s more; "
        "--max-time {}s would do",
        because, more_ns / 1e9, seconds)};
  }

  // What the requests said before the budget ran out: a limiter that makes requests wait
  // instead of denying them (a queue) shows as replies that grow slower, none denied.
  void note_queueing() {
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

  // Single probes at geometric steps from `from_ns` (relative to `origin_ns`) until one is
  // admitted. Denied probes change no state of a sliding log, a bucket or GCRA.
  Readmission search(int identity, int64_t origin_ns, int64_t from_ns, int64_t known_denied_ns) {
    int64_t denied_at = known_denied_ns;
    int64_t due = checks::next_probe_ns(origin_ns, from_ns, k_step_ratio, k_min_step_ns);
    while (true) {
      const ProbeRequest probe = send(identity, 1, std::max(due, target_.now_ns())).front();
      if (probe.outcome == Outcome::allowed)
        return {denied_at, probe.at_ns};
      denied_at = probe.at_ns;
      due = checks::next_probe_ns(origin_ns, denied_at, k_step_ratio, k_min_step_ns);
    }
  }

  std::vector<ProbeRequest> first_burst(int64_t from_ns = 0) {
    std::vector<ProbeRequest> burst;
    for (int64_t chunk = k_first_chunk;; chunk *= 2) {
      const auto part = send(1, chunk, std::max(from_ns, target_.now_ns()));
      burst.insert(burst.end(), part.begin(), part.end());
      if (checks::count_burst(part).first_denied_ns ||
          static_cast<int64_t>(burst.size()) >= k_max_burst) {
        return burst;
      }
    }
  }

  void infer() {
    auto& evidence = result_.evidence;
    // Phase 1: as fast as possible on a fresh identity, doubling until something is denied.
    std::vector<ProbeRequest> burst = first_burst();
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
      throw Halt{
          target_.fresh_identities()
              ? "the first request was denied: the identity was not fresh (put {run} where the "
                "limiter reads its identity: the URL, a header or the body)"
              : "the first request was denied and its denial carried no hint of when to retry "
                "(put {run} where the limiter reads its identity, or give --source-address "
                "two or more addresses for a limiter keyed by client address)"};
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

    // Phase 2: when does capacity come back?
    const Readmission first =
        search(1, first_admitted, *count.last_denied_ns, *count.last_denied_ns);
    evidence.push_back(
        fmt::format("capacity came back {:.1f} ms (±{:.1f}) after the first admission",
                    ms(first.estimate_ns() - first_admitted), ms(first.uncertainty_ns())));

    // Phase 3: all of it at once (a window), or one request (a bucket)?
    const auto follow_up = send(1, limit, target_.now_ns());
    const int64_t freed = admitted(follow_up);
    const checks::Family family = checks::family_after_readmission(limit, freed);
    evidence.push_back(fmt::format("right then, {} of a burst of {} admitted: {}", freed, limit,
                                   family == checks::Family::bucket
                                       ? "one request at a time comes back (a bucket)"
                                       : "the whole window comes back at once"));
    if (family == checks::Family::bucket) {
      infer_bucket(limit, first_admitted, first, follow_up);
    } else {
      if (family == checks::Family::unknown) {
        result_.notes.push_back(
            "with a limit of 1 a window and a bucket of 1 admit alike; reported as a window");
      }
      infer_window(limit, first_admitted, first, follow_up, freed);
    }
  }

  // The bucket is drained: time the next few single readmissions at a tenth of a token.
  void infer_bucket(int64_t burst, int64_t first_admitted, const Readmission& first,
                    const std::vector<ProbeRequest>& follow_up) {
    const int64_t token_ns = first.estimate_ns() - first_admitted;
    const int64_t step = std::max(k_min_step_ns, token_ns / k_probes_per_token);
    plan(static_cast<double>(token_ns) * k_refill_readmissions * (1 + k_agreement),
         fmt::format("a token comes back every {:.1f} ms and {} are timed", ms(token_ns),
                     k_refill_readmissions));
    std::vector<int64_t> readmissions;
    int64_t due = follow_up.back().at_ns + step;
    while (static_cast<int>(readmissions.size()) < k_refill_readmissions) {
      const ProbeRequest probe = send(1, 1, std::max(due, target_.now_ns())).front();
      if (probe.outcome == Outcome::allowed)
        readmissions.push_back(probe.at_ns);
      due = std::max(due + step, probe.at_ns + k_min_step_ns);
    }
    const double refill = *checks::refill_from(readmissions);
    result_.algorithm = "token-bucket";
    result_.burst = burst;
    result_.refill_per_s = std::round(refill * 100) / 100;
    // Each readmission is seen up to one probe step late; the span between the first and the
    // last is off by less than a step (and the probes' own timing).
    result_.refill_tolerance =
        static_cast<double>(step + k_timing_slack_ns) /
        static_cast<double>(std::max<int64_t>(1, readmissions.back() - readmissions.front()));
    result_.evidence.push_back(fmt::format(
        "probed every {:.1f} ms, single requests came back {:.1f} ms apart ({} in {:.1f} ms): "
        "{:.2f} per second",
        ms(step), ms(readmissions.back() - readmissions.front()) / (k_refill_readmissions - 1),
        readmissions.size(), ms(readmissions.back() - readmissions.front()), refill));
    // A bucket drained from full gets its first token back one refill interval after its
    // first admission.
    const bool consistent = agrees(static_cast<double>(token_ns), 1e9 / refill);
    result_.confidence = consistent ? "high" : "low";
    if (!consistent) {
      result_.notes.push_back(fmt::format(
          "the first readmission came {:.1f} ms after the first admission where one token "
          "takes {:.1f} ms",
          ms(token_ns), 1e3 / refill));
    }
    result_.notes.push_back(
        "GCRA admits exactly as a token bucket of the same burst and refill (each frees one "
        "request every 1/refill, up to the burst): from outside they are one contract, "
        "reported as token-bucket");
  }

  void infer_window(int64_t limit, int64_t first_admitted, const Readmission& first,
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

    // The spread test on a fresh identity: one admission, the rest half a window later. The
    // single admission comes a quarter window after the boundary just seen, so that a clock's
    // next boundary (3/4 W after it) is not where a first-hit window ends (W after it). Without
    // fresh identities the same one, once everything it was admitted has left even a sliding
    // window.
    const int spread = target_.fresh_identities() ? 2 : 1;
    const double spread_wait = target_.fresh_identities() ? 0.25 : 1.25;
    const int64_t single_at =
        second.admitted_ns + static_cast<int64_t>(static_cast<double>(window_guess) * spread_wait) +
        k_timing_slack_ns;
    if (!target_.fresh_identities()) {
      evidence.push_back(fmt::format(
          "one identity (no {{run}}): waited {:.0f} ms for its window to empty before the spread "
          "test",
          ms(single_at - target_.now_ns())));
    }
    const auto single = send(spread, 1, std::max(single_at, target_.now_ns()));
    if (admitted(single) != 1)
      throw Halt{"the first request of a fresh identity was denied"};
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
        result_.notes.push_back(fmt::format(
            "the first burst crossed a window boundary ({} admitted across it)", limit));
      }
      const int64_t anchor_tolerance =
          static_cast<int64_t>(k_anchor_tolerance * static_cast<double>(window_guess)) + timing;
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
    result_.confidence = consistent ? "high" : "low";
    if (!consistent)
      result_.notes.push_back("the spread test's readmission did not come where the window says");
  }

  ProbeTarget& target_;
  ProbeTarget::Clock::time_point started_;
  ProbeTarget::Clock::time_point deadline_;
  checks::InferredContract result_;
  std::vector<ProbeRequest> seen_;  // every request so far
  bool budget_halt_ = false;        // the budget, not the limiter, ended the probe
};

}  // namespace

checks::InferredContract infer_contract(ProbeTarget& target, ProbeTarget::Clock::time_point started,
                                        ProbeTarget::Clock::time_point deadline) {
  return Sequence(target, started, deadline).run();
}

int run_probe(const config::Config& config) {
  const auto started = ProbeTarget::Clock::now();
  std::unique_ptr<ProbeTarget> target = config.http.urls.empty()
                                            ? runner::make_redis_probe_target(config)
                                            : runner::make_http_probe_target(config);
  report::ProbeReport report;
  report.mode = config.http.urls.empty() ? "redis" : "http";
  report.target = target->describe();
  report.inferred = infer_contract(*target, started, started + config.probe.max_time);
  const runner::AdvertisedParams advertised = runner::read_advertised_params(target->results());
  report.advertised.limit = advertised.limit;
  report.advertised.window_s = advertised.window_s;
  report.judgement = checks::judge_advertised(report.inferred, report.advertised);
  report.flags = checks::contract_flags(report.inferred, report.advertised);
  report.requests = target->requests_sent();
  report.elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(ProbeTarget::Clock::now() - started)
          .count();
  report.interrupted = target->interrupted() || engine::interrupted();
  base::ExitCode code = base::ExitCode::ok;
  if (report.interrupted)
    code = base::ExitCode::interrupted;
  else if (report.inferred.algorithm == "unknown")
    code = base::ExitCode::cannot_test;
  else if (report.judgement.matches == false)
    code = base::ExitCode::check_failed;
  report.exit_code = static_cast<int>(code);
  if (config.output.json)
    std::cout << report::probe_to_json(report).dump(2) << "\n";
  else
    std::cout << report::render_probe(report, config.output.quiet);
  std::cout.flush();
  return report.exit_code;
}

}  // namespace rlcheck::app
