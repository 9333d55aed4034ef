#include "checks/contract_inference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace rlcheck::checks {
namespace {

using engine::Outcome;

constexpr double k_slack = 0.10;  // measurement slack on durations and rates

bool within(double measured, double low, double high) {
  return measured >= low * (1 - k_slack) && measured <= high * (1 + k_slack);
}

}  // namespace

BurstCount count_burst(std::span<const ProbeRequest> requests) {
  BurstCount count;
  for (const ProbeRequest& request : requests) {
    if (request.outcome == Outcome::allowed) {
      ++count.admitted_total;
      if (!count.first_admitted_ns)
        count.first_admitted_ns = request.at_ns;
      if (!count.first_denied_ns)
        ++count.admitted;
    } else if (request.outcome == Outcome::denied) {
      if (!count.first_denied_ns) {
        count.first_denied_ns = request.at_ns;
        count.first_hint_ms = request.retry_ms;
      }
      count.last_denied_ns = request.at_ns;
    }
  }
  return count;
}

int64_t next_probe_ns(int64_t origin_ns, int64_t last_ns, double step_ratio, int64_t min_step_ns) {
  const auto elapsed = static_cast<double>(std::max<int64_t>(0, last_ns - origin_ns));
  const auto step = static_cast<int64_t>(elapsed * step_ratio);
  return last_ns + std::max(min_step_ns, step);
}

Family family_after_readmission(int64_t limit, int64_t follow_up_admitted) {
  if (limit < 2)
    return Family::unknown;
  // A window gives back limit - 1 (the readmitted probe took one slot); a bucket about 0.
  return follow_up_admitted >= 1 && 2 * follow_up_admitted >= limit - 1 ? Family::window
                                                                        : Family::bucket;
}

WindowKind window_kind(int64_t limit, int64_t second_batch_admitted,
                       std::optional<int64_t> after_readmission_admitted) {
  // The single admission still counts in a sliding window: the batch gets limit - 1 at most.
  if (second_batch_admitted >= limit)
    return WindowKind::fixed;
  if (!after_readmission_admitted)
    return WindowKind::sliding;
  return family_after_readmission(limit, *after_readmission_admitted) == Family::window
             ? WindowKind::fixed
             : WindowKind::sliding;
}

int64_t window_between(WindowKind kind, const Readmission& first, const Readmission& second) {
  if (kind == WindowKind::sliding)
    return second.estimate_ns() - first.admitted_ns;
  return second.estimate_ns() - first.estimate_ns();
}

std::optional<double> refill_from(std::span<const int64_t> readmissions_ns) {
  if (readmissions_ns.size() < 2)
    return std::nullopt;
  const int64_t span = readmissions_ns.back() - readmissions_ns.front();
  if (span <= 0)
    return std::nullopt;
  return static_cast<double>(readmissions_ns.size() - 1) * 1e9 / static_cast<double>(span);
}

std::optional<RateInterval> refill_interval(std::span<const ProbeRequest> timed,
                                            int64_t resolution_ns) {
  // Per admission after the first denial: the bounds of its token's instant.
  std::optional<double> after;  // the last denial's earliest decision instant
  std::vector<std::pair<double, double>> tokens;
  for (const ProbeRequest& request : timed) {
    const double half = static_cast<double>(request.latency_ns) / 2;
    const auto at = static_cast<double>(request.at_ns);
    if (request.outcome == Outcome::denied)
      after = at - half;
    else if (request.outcome == Outcome::allowed && after)
      tokens.emplace_back(*after, at + half);
  }
  if (tokens.size() < 2)
    return std::nullopt;
  // Tokens i < j are j - i intervals apart: every pair bounds the rate, and the rate lies in
  // all their intervals at once (one slow reply loosens only the pairs it is part of).
  const auto resolution = static_cast<double>(resolution_ns);
  RateInterval interval{0, std::numeric_limits<double>::infinity()};
  for (size_t i = 0; i < tokens.size(); ++i) {
    for (size_t j = i + 1; j < tokens.size(); ++j) {
      const auto intervals = static_cast<double>(j - i);
      const double widest = tokens[j].second - tokens[i].first + 2 * resolution;
      const double tightest = tokens[j].first - tokens[i].second - 2 * resolution;
      interval.low_per_s = std::max(interval.low_per_s, intervals * 1e9 / widest);
      if (tightest > 0)
        interval.high_per_s = std::min(interval.high_per_s, intervals * 1e9 / tightest);
    }
  }
  if (interval.low_per_s > interval.high_per_s)
    return std::nullopt;  // no one rate fits every pair: not one token every interval
  return interval;
}

AdvertisedJudgement judge_advertised(const InferredContract& inferred,
                                     const AdvertisedContract& advertised) {
  AdvertisedJudgement judgement;
  // A queue advertises nothing rlcheck reads as its rate or size.
  // Nor a cap on requests in progress, nor a slow-down (it denies nothing).
  if (!advertised.any() || inferred.algorithm == "unknown" || inferred.algorithm == "queue" ||
      inferred.algorithm == "concurrency" || inferred.algorithm == "ban" ||
      inferred.algorithm == "slow-down")
    return judgement;
  auto& reasons = judgement.reasons;
  // A whole-second window w stands for a true window within (w - 1 s, w].
  const auto window_low_ms = [&] { return std::max<int64_t>(0, *advertised.window_s - 1) * 1000; };
  const auto window_high_ms = [&] { return *advertised.window_s * 1000; };
  if (inferred.algorithm == "none") {
    if (advertised.limit) {
      reasons.push_back(fmt::format("the headers advertise a limit of {} but no request was denied",
                                    *advertised.limit));
    }
  } else if (inferred.algorithm == "fixed" || inferred.algorithm == "sliding" ||
             inferred.algorithm == "sliding-counter" || inferred.algorithm == "denial-counting") {
    if (advertised.limit && inferred.limit && *advertised.limit != *inferred.limit) {
      reasons.push_back(fmt::format("the headers advertise a limit of {}; {} were admitted",
                                    *advertised.limit, *inferred.limit));
    }
    if (advertised.window_s && inferred.window_ms &&
        !within(static_cast<double>(*inferred.window_ms), static_cast<double>(window_low_ms()),
                static_cast<double>(window_high_ms()))) {
      reasons.push_back(fmt::format("the headers advertise a window of {}s; it measured {}ms",
                                    *advertised.window_s, *inferred.window_ms));
    }
  } else {
    // q per w: the burst is q, the refill q per w.
    if (advertised.limit && inferred.burst && *advertised.limit != *inferred.burst) {
      reasons.push_back(fmt::format("the headers advertise a limit of {}; the burst is {}",
                                    *advertised.limit, *inferred.burst));
    }
    if (advertised.limit && advertised.window_s && inferred.refill_per_s) {
      const double q = static_cast<double>(*advertised.limit);
      const double high =
          window_low_ms() > 0 ? q * 1000 / static_cast<double>(window_low_ms()) : q * 1000;
      const double low = q * 1000 / static_cast<double>(window_high_ms());
      if (!within(*inferred.refill_per_s, low, high)) {
        reasons.push_back(fmt::format("the headers advertise {} per {}s; it refills {:.2f}/s",
                                      *advertised.limit, *advertised.window_s,
                                      *inferred.refill_per_s));
      }
    }
  }
  judgement.matches = reasons.empty();
  return judgement;
}

bool first_hit_anchor(int64_t window_ns, int64_t tolerance_ns, int64_t first_since_admission_ns,
                      std::optional<int64_t> second_since_admission_ns) {
  // A boundary shared by every identity falls anywhere in (0, W] after an identity's first
  // admission; a window opened by that admission ends exactly W after it, for every identity.
  const auto near_window = [&](int64_t since) {
    return std::llabs(since - window_ns) <= tolerance_ns;
  };
  return second_since_admission_ns && near_window(first_since_admission_ns) &&
         near_window(*second_since_admission_ns);
}

Refill refill_by_first_readmission(int64_t limit, int64_t interval_ns, int64_t first_ns,
                                   double tolerance) {
  if (limit < 2 || interval_ns <= 0 || first_ns <= 0)
    return Refill::unknown;
  const double intervals = static_cast<double>(first_ns) / static_cast<double>(interval_ns);
  const auto l = static_cast<double>(limit);
  if (std::abs(intervals - 1) <= tolerance)
    return Refill::token_bucket;
  if (std::abs(intervals - l) <= tolerance * l)
    return Refill::counter_first_hit;
  return intervals < l ? Refill::counter_clock : Refill::unknown;
}

Refill refill_by_phase(int64_t limit, int64_t interval_ns, int64_t boundary_in_ns,
                       int64_t readmitted_in_ns, double tolerance, int64_t slack_ns) {
  if (limit < 2 || interval_ns <= 0)
    return Refill::unknown;
  const auto near = [&](int64_t predicted) {
    return std::llabs(readmitted_in_ns - predicted) <=
           static_cast<int64_t>(tolerance * static_cast<double>(predicted)) + slack_ns;
  };
  const bool bucket = near(interval_ns);
  const bool first_hit = near(limit * interval_ns);
  const bool clock = near(boundary_in_ns);
  if (bucket + first_hit + clock != 1)
    return Refill::unknown;
  return bucket      ? Refill::token_bucket
         : first_hit ? Refill::counter_first_hit
                     : Refill::counter_clock;
}

int64_t phase_test_start_ns(int64_t boundary_ns, int64_t window_ns, int64_t lead_ns,
                            int64_t not_before_ns) {
  if (window_ns <= 0)
    return not_before_ns;
  const int64_t earliest = not_before_ns + lead_ns;
  int64_t boundary = boundary_ns;
  if (boundary < earliest) {
    const int64_t windows = (earliest - boundary + window_ns - 1) / window_ns;
    boundary += windows * window_ns;
  }
  return boundary - lead_ns;
}

int64_t control_due_ns(int64_t drained_ns, int64_t first_gap_ns, int asked) {
  return drained_ns + (first_gap_ns << std::min(asked, 40));
}

bool counts_denials(Outcome control, Outcome probed_right_after) {
  return control == Outcome::allowed && probed_right_after == Outcome::denied;
}

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

bool waits_one_by_one(std::span<const ProbeRequest> one_by_one) {
  if (one_by_one.size() < 4)
    return false;
  std::vector<double> waits;
  for (const ProbeRequest& request : one_by_one) {
    if (request.outcome != Outcome::allowed)
      return false;
    if (&request != &one_by_one.front())
      waits.push_back(static_cast<double>(request.latency_ns));
  }
  const auto first = static_cast<double>(one_by_one.front().latency_ns);
  const double typical = median(waits);
  if (typical < 4 * first || typical < first + 2e6)
    return false;
  // The middle half (the first and last quarter dropped) within 25 % of the median.
  std::sort(waits.begin(), waits.end());
  const size_t quarter = waits.size() / 4;
  return waits[quarter] >= 0.75 * typical && waits[waits.size() - 1 - quarter] <= 1.25 * typical;
}

std::optional<QueueFit> fit_queue(std::span<const ProbeRequest> at_once) {
  // Requests sent together reach the limiter in an order of their own: each one's place in the
  // queue is its rank among the waits.
  std::vector<double> latencies;
  QueueFit fit;
  for (const ProbeRequest& request : at_once) {
    if (request.outcome == Outcome::denied)
      ++fit.denied;
    else if (request.outcome == Outcome::allowed)
      latencies.push_back(static_cast<double>(request.latency_ns));
  }
  if (latencies.size() < 3)
    return std::nullopt;
  std::sort(latencies.begin(), latencies.end());
  const auto n = static_cast<double>(latencies.size());
  // The line through the waits by rank: the median of the slopes between every two (Theil and
  // Sen), so that one reply read late (a loaded machine) does not tilt it, as it would a least-
  // squares line through five points.
  std::vector<double> slopes;
  for (size_t i = 0; i < latencies.size(); ++i) {
    for (size_t j = i + 1; j < latencies.size(); ++j)
      slopes.push_back((latencies[j] - latencies[i]) / static_cast<double>(j - i));
  }
  const double slope = median(std::move(slopes));  // ns per place: one departure interval
  if (slope < 1e6)
    return std::nullopt;
  std::vector<double> intercepts;
  for (size_t i = 0; i < latencies.size(); ++i)
    intercepts.push_back(latencies[i] - slope * static_cast<double>(i));
  const double intercept = median(std::move(intercepts));
  double scatter = 0;
  for (size_t i = 0; i < latencies.size(); ++i) {
    const double line = intercept + slope * static_cast<double>(i);
    scatter += std::abs(latencies[i] - line) / n;
  }
  if (scatter > slope / 4)
    return std::nullopt;
  fit.rate_per_s = 1e9 / slope;
  // The line is off by its scatter at both ends of its span.
  fit.rate_tolerance = 2 * scatter / (slope * (n - 1));
  fit.waited = std::count_if(latencies.begin(), latencies.end(), [&](double latency) {
    return latency - latencies.front() > slope / 2;
  });
  if (fit.denied > 0)
    fit.queue = fit.waited;
  return fit;
}

namespace {

// The first rule of snap_duration_ms whose value lies in [low_ms, high_ms].
SnappedDuration snap_duration_between(double measured_ms, double low_ms, double high_ms,
                                      std::optional<int64_t> advertised_ms) {
  const auto fits = [&](double candidate) {
    return candidate > 0 && candidate >= low_ms && candidate <= high_ms;
  };
  if (advertised_ms && fits(static_cast<double>(*advertised_ms)))
    return {*advertised_ms, "advertised"};
  // The coarsest unit that fits: an hour, a minute, a second, then 100 and 10 ms.
  for (const double step : {3'600'000.0, 60'000.0, 1000.0, 100.0, 10.0}) {
    const double candidate = std::round(measured_ms / step) * step;
    if (fits(candidate))
      return {std::llround(candidate), "round"};
  }
  return {std::max<int64_t>(1, std::llround(measured_ms)), "measured"};
}

}  // namespace

SnappedDuration snap_duration_ms(double measured_ms, double tolerance_ms,
                                 std::optional<int64_t> advertised_ms) {
  return snap_duration_between(measured_ms, measured_ms - tolerance_ms, measured_ms + tolerance_ms,
                               advertised_ms);
}

SnappedRate snap_rate(double measured_per_s, const RateInterval& interval,
                      std::optional<int64_t> advertised_q, std::optional<int64_t> advertised_w_s) {
  const auto fits = [&](double candidate) { return candidate > 0 && interval.contains(candidate); };
  if (advertised_q && advertised_w_s && *advertised_w_s > 0) {
    const double rate = static_cast<double>(*advertised_q) / static_cast<double>(*advertised_w_s);
    if (fits(rate)) {
      return {*advertised_w_s == 1 ? fmt::format("{}/s", *advertised_q)
                                   : fmt::format("{}/{}s", *advertised_q, *advertised_w_s),
              rate, "advertised"};
    }
  }
  // A whole number per second, when it is the only one inside (else the choice is a guess).
  const double per_s = std::round(measured_per_s);
  const bool one_whole = std::floor(interval.high_per_s) - std::ceil(interval.low_per_s) < 1;
  if (fits(per_s) && one_whole)
    return {fmt::format("{}/s", std::llround(per_s)), per_s, "round"};
  // One token every whole hour, minute or second.
  for (const double unit_s : {3600.0, 60.0, 1.0}) {
    const double seconds = std::round(1 / measured_per_s / unit_s) * unit_s;
    if (seconds > 0 && fits(1 / seconds))
      return {fmt::format("1/{}s", std::llround(seconds)), 1 / seconds, "round"};
  }
  // One token per interval: the interval snapped as a duration, inside the interval's bounds.
  const SnappedDuration interval_ms = snap_duration_between(
      1000 / measured_per_s, 1000 / interval.high_per_s,
      interval.low_per_s > 0 ? 1000 / interval.low_per_s : std::numeric_limits<double>::infinity(),
      {});
  return {fmt::format("1/{}ms", interval_ms.ms), 1000 / static_cast<double>(interval_ms.ms),
          interval_ms.basis};
}

namespace {

std::string duration_flag(int64_t ms) {
  return ms % 1000 == 0 ? fmt::format("{}s", ms / 1000) : fmt::format("{}ms", ms);
}

}  // namespace

namespace {

struct Flags {
  std::string text;
  std::string unsnapped;  // why a value went in as measured; "" when every one was snapped
  std::string spec;       // the same contract as a --contract spec ("sliding:5/1s")
};

Flags flags_of(const InferredContract& inferred, const AdvertisedContract& advertised) {
  if ((inferred.algorithm == "fixed" || inferred.algorithm == "sliding" ||
       inferred.algorithm == "sliding-counter") &&
      inferred.limit && inferred.window_ms) {
    std::optional<int64_t> advertised_ms;
    if (advertised.window_s)
      advertised_ms = *advertised.window_s * 1000;
    const SnappedDuration window = snap_duration_ms(static_cast<double>(*inferred.window_ms),
                                                    inferred.window_tolerance_ms, advertised_ms);
    const std::string anchor =
        inferred.anchor == "first-hit" ? std::string(" --anchor first-hit") : std::string();
    Flags flags{
        fmt::format("--contract {}{} --limit {} --window {}", inferred.algorithm, anchor,
                    *inferred.limit, duration_flag(window.ms)),
        "",
        fmt::format("{}:{}/{}{}", inferred.algorithm, *inferred.limit, duration_flag(window.ms),
                    inferred.anchor == "first-hit" ? "@first-hit" : "")};
    if (window.basis == "measured") {
      flags.unsnapped = fmt::format(
          "no round window lies within the measured {} ms (±{:.0f}): the flags carry the "
          "measurement itself",
          *inferred.window_ms, inferred.window_tolerance_ms);
    }
    return flags;
  }
  const auto refill_flag = [&](const SnappedRate& refill) {
    if (refill.basis != "measured")
      return std::string();
    return fmt::format(
        "no round rate lies within what the readmissions allow ({:.3g} to {:.3g} per second, "
        "{:.3g} measured): the flags carry the measurement itself ({})",
        inferred.refill_interval.low_per_s, inferred.refill_interval.high_per_s,
        *inferred.refill_per_s, refill.text);
  };
  if (inferred.algorithm == "token-bucket" && inferred.burst && inferred.step_tokens &&
      inferred.step_interval_ms) {
    const SnappedDuration interval =
        snap_duration_ms(static_cast<double>(*inferred.step_interval_ms),
                         inferred.step_interval_tolerance_ms, std::nullopt);
    const std::string refill =
        fmt::format("{}/{},steps", *inferred.step_tokens, duration_flag(interval.ms));
    Flags flags{
        fmt::format("--contract token-bucket --burst {} --refill {}", *inferred.burst, refill), "",
        fmt::format("token-bucket:{},{}", *inferred.burst, refill)};
    if (interval.basis == "measured") {
      flags.unsnapped = fmt::format(
          "no round interval lies within the measured {} ms (±{:.0f}) between ticks: the flags "
          "carry the measurement itself",
          *inferred.step_interval_ms, inferred.step_interval_tolerance_ms);
    }
    return flags;
  }
  if ((inferred.algorithm == "token-bucket" || inferred.algorithm == "gcra") && inferred.burst &&
      inferred.refill_per_s && *inferred.refill_per_s > 0) {
    const SnappedRate refill = snap_rate(*inferred.refill_per_s, inferred.refill_interval,
                                         advertised.limit, advertised.window_s);
    return {fmt::format("--contract {} --burst {} --refill {}", inferred.algorithm, *inferred.burst,
                        refill.text),
            refill_flag(refill),
            fmt::format("{}:{},{}", inferred.algorithm, *inferred.burst, refill.text)};
  }
  if (inferred.algorithm == "ban" && inferred.limit && inferred.window_ms && inferred.inner &&
      inferred.ban_ms) {
    const SnappedDuration window = snap_duration_ms(static_cast<double>(*inferred.window_ms),
                                                    inferred.window_tolerance_ms, std::nullopt);
    const SnappedDuration ban = snap_duration_ms(static_cast<double>(*inferred.ban_ms),
                                                 inferred.ban_tolerance_ms, std::nullopt);
    const std::string spec = fmt::format("ban:{}:{}/{},{}", *inferred.inner, *inferred.limit,
                                         duration_flag(window.ms), duration_flag(ban.ms));
    Flags flags{"--contract " + spec, "", spec};
    if (window.basis == "measured" || ban.basis == "measured") {
      flags.unsnapped = fmt::format(
          "no round inner window or ban lies within the measured {} ms (±{:.0f}) and {} ms "
          "(±{:.0f}): the flags carry the measurement itself",
          *inferred.window_ms, inferred.window_tolerance_ms, *inferred.ban_ms,
          inferred.ban_tolerance_ms);
    }
    return flags;
  }
  if (inferred.algorithm == "concurrency" && inferred.limit && *inferred.limit > 0) {
    const std::string spec = fmt::format("concurrency:{}", *inferred.limit);
    return {"--contract " + spec, "", spec};
  }
  if (inferred.algorithm == "slow-down" && inferred.limit && inferred.window_ms &&
      inferred.delay_step_ms) {
    const SnappedDuration window = snap_duration_ms(static_cast<double>(*inferred.window_ms),
                                                    inferred.window_tolerance_ms, std::nullopt);
    const SnappedDuration step =
        snap_duration_ms(*inferred.delay_step_ms, inferred.delay_step_tolerance_ms, std::nullopt);
    std::optional<SnappedDuration> most;
    if (inferred.max_delay_ms) {
      most =
          snap_duration_ms(*inferred.max_delay_ms, inferred.max_delay_tolerance_ms, std::nullopt);
    }
    const std::string spec = fmt::format(
        "slow-down:{}:{}/{},{}{}", inferred.anchor.value_or("first-hit"), *inferred.limit,
        duration_flag(window.ms), duration_flag(std::max<int64_t>(1, step.ms)),
        most ? "," + duration_flag(std::max<int64_t>(1, most->ms)) : std::string());
    // No longest delay reached: named without one, a load that meets it fails `contract`; named
    // with a guess, one whose delays grow past it fails `delay`. No flags, the reading in a note.
    if (!most) {
      return {"",
              fmt::format("no flags: no longest delay was reached, and a slow-down named without "
                          "one fails `contract` wherever a load meets it, one named with a guess "
                          "`delay` wherever the delays grow past it; what was read: {} (add "
                          "`,MAX` once the longest delay is known)",
                          spec),
              ""};
    }
    Flags flags{"--contract " + spec, "", spec};
    if (window.basis == "measured" || step.basis == "measured" ||
        (most && most->basis == "measured")) {
      flags.unsnapped = fmt::format(
          "no round window, step or longest delay lies within the measured {} ms (±{:.0f}), "
          "{:.1f} ms (±{:.1f}){}: the flags carry the measurement itself",
          *inferred.window_ms, inferred.window_tolerance_ms, *inferred.delay_step_ms,
          inferred.delay_step_tolerance_ms,
          most ? fmt::format(" and {:.0f} ms (±{:.0f})", *inferred.max_delay_ms,
                             inferred.max_delay_tolerance_ms)
               : std::string());
    }
    return flags;
  }
  if (inferred.algorithm == "queue" && inferred.queue && inferred.refill_per_s &&
      *inferred.refill_per_s > 0) {
    const SnappedRate refill =
        snap_rate(*inferred.refill_per_s, inferred.refill_interval, std::nullopt, std::nullopt);
    return {fmt::format("--contract queue --refill {} --queue {}", refill.text, *inferred.queue),
            refill_flag(refill), fmt::format("queue:{},{}", refill.text, *inferred.queue)};
  }
  return {};
}

}  // namespace

std::string contract_flags(const InferredContract& inferred, const AdvertisedContract& advertised) {
  return flags_of(inferred, advertised).text;
}

std::string suggest_flags(InferredContract& inferred, const AdvertisedContract& advertised) {
  Flags flags = flags_of(inferred, advertised);
  if (!flags.unsnapped.empty()) {
    inferred.confidence = "low";
    inferred.notes.push_back(std::move(flags.unsnapped));
  }
  return flags.text;
}

std::string contract_spec(const InferredContract& inferred, const AdvertisedContract& advertised) {
  return flags_of(inferred, advertised).spec;
}

std::string second_limit_spec(const SecondLimitSearch& second) {
  if (second.outcome != "found" || !second.limit || !second.window_ms)
    return "";
  const SnappedDuration window = snap_duration_ms(static_cast<double>(*second.window_ms),
                                                  second.window_tolerance_ms, std::nullopt);
  return fmt::format("sliding:{}/{}", *second.limit, duration_flag(window.ms));
}

}  // namespace rlcheck::checks
