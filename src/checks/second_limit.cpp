#include "checks/second_limit.hpp"

#include <algorithm>

namespace rlcheck::checks {
namespace {

using engine::Outcome;

// A hint is often whole seconds (Retry-After, rounded up): a window read off one is this far
// off at most.
constexpr int64_t k_second_hint_resolution_ns = 1'000'000'000;

}  // namespace

std::optional<FirstLimit> first_limit_of(const InferredContract& inferred, int64_t slack_ns) {
  const std::string& algorithm = inferred.algorithm;
  if ((algorithm == "sliding" || algorithm == "fixed") && inferred.limit && inferred.window_ms &&
      *inferred.limit > 0 && *inferred.window_ms > 0) {
    FirstLimit first;
    first.limit = *inferred.limit;
    first.window_ns = *inferred.window_ms * 1'000'000;
    first.slack_ns = slack_ns + static_cast<int64_t>(inferred.window_tolerance_ms * 1e6);
    return first;
  }
  if (algorithm == "token-bucket" && inferred.burst && inferred.refill_per_s &&
      *inferred.burst > 0 && *inferred.refill_per_s > 0) {
    FirstLimit first;
    first.bucket = true;
    first.burst = *inferred.burst;
    // The slowest refill the readmissions allow: a denial is the bucket's when it may be empty.
    const double low = inferred.refill_interval.low_per_s;
    first.refill_per_s = low > 0 ? std::min(low, *inferred.refill_per_s) : *inferred.refill_per_s;
    first.slack_ns = slack_ns;
    return first;
  }
  return std::nullopt;
}

double first_rate_per_s(const FirstLimit& first) {
  if (first.bucket)
    return first.refill_per_s;
  return static_cast<double>(first.limit) * 1e9 / static_cast<double>(first.window_ns);
}

int64_t first_span_ns(const FirstLimit& first) {
  if (first.bucket)
    return static_cast<int64_t>(static_cast<double>(first.burst) * 1e9 / first.refill_per_s);
  return first.window_ns;
}

bool first_limit_had_room(const FirstLimit& first, std::span<const ProbeRequest> before,
                          const ProbeRequest& request) {
  const int64_t earliest = request.at_ns - request.latency_ns / 2 - first.slack_ns;
  const auto latest = [&](const ProbeRequest& r) { return r.at_ns + r.latency_ns / 2; };
  if (!first.bucket) {
    const int64_t from = earliest - first.window_ns;
    const auto held = std::count_if(before.begin(), before.end(), [&](const ProbeRequest& r) {
      return r.outcome == Outcome::allowed && latest(r) > from && r.at_ns <= request.at_ns;
    });
    return held < first.limit;
  }
  // Full at the start; each admission takes a token as late as it may have, and tokens come
  // back at the slowest rate allowed.
  double tokens = static_cast<double>(first.burst);
  std::optional<int64_t> last;
  const auto refill_until = [&](int64_t ns) {
    if (last) {
      tokens = std::min(static_cast<double>(first.burst),
                        tokens + first.refill_per_s * static_cast<double>(ns - *last) / 1e9);
    }
    last = ns;
  };
  for (const ProbeRequest& admitted : before) {
    if (admitted.outcome != Outcome::allowed || admitted.at_ns > request.at_ns)
      continue;
    refill_until(std::max(latest(admitted) + first.slack_ns, last.value_or(0)));
    tokens -= 1;
  }
  refill_until(std::max(earliest, last.value_or(earliest)));
  return tokens >= 1;
}

SustainedReading read_sustained(const FirstLimit& first, std::span<const ProbeRequest> phase) {
  SustainedReading reading;
  reading.requests = static_cast<int64_t>(phase.size());
  std::optional<int64_t> last_denied;
  int64_t last_denied_latency = 0;
  for (size_t i = 0; i < phase.size(); ++i) {
    const ProbeRequest& request = phase[i];
    reading.last_ns = request.at_ns;
    if (request.outcome == Outcome::allowed) {
      ++reading.admitted;
      if (!reading.first_admitted_ns)
        reading.first_admitted_ns = request.at_ns;
      if (!reading.second_denial_ns) {
        ++reading.admitted_before_second;
      } else if (!reading.readmission) {
        reading.readmission = Readmission{*last_denied, request.at_ns,
                                          (last_denied_latency + request.latency_ns) / 4};
      }
      continue;
    }
    if (request.outcome != Outcome::denied)
      continue;
    if (!reading.second_denial_ns) {
      if (first_limit_had_room(first, phase.subspan(0, i), request) && reading.first_admitted_ns) {
        reading.second_denial_ns = request.at_ns;
        reading.second_hint_ms = request.retry_ms;
      } else {
        ++reading.explained_denials;
      }
    }
    last_denied = request.at_ns;
    last_denied_latency = request.latency_ns;
  }
  return reading;
}

std::optional<SecondWindow> second_window(const SustainedReading& reading) {
  if (!reading.second_denial_ns || !reading.first_admitted_ns)
    return std::nullopt;
  const int64_t origin = *reading.first_admitted_ns;
  if (reading.readmission) {
    return SecondWindow{reading.readmission->estimate_ns() - origin,
                        reading.readmission->uncertainty_ns(), false};
  }
  if (reading.second_hint_ms && *reading.second_hint_ms > 0) {
    const int64_t waited = *reading.second_denial_ns - origin;
    return SecondWindow{waited + *reading.second_hint_ms * 1'000'000, k_second_hint_resolution_ns,
                        true};
  }
  return std::nullopt;
}

}  // namespace rlcheck::checks
