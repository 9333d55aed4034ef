#include "checks/latency_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <queue>
#include <string>
#include <tuple>

#include "checks/contract_inference.hpp"
#include "config/contract_spec.hpp"

namespace rlcheck::checks {
namespace {

constexpr int64_t k_least_queue_wait_ns = 10'000'000;  // below this, a reply read late
// What a reply read late on a loaded machine may add to a delay, in the reading only: half the
// least tolerance the slow-down audit judges a delay with (100 ms), which the replay then holds.
constexpr int64_t k_recorded_slow_down_slack_ns = 50'000'000;
constexpr double k_ns_per_ms_f = 1e6;

// A measured duration as the flags spell it: snapped to a round one within `tolerance_ns`,
// then to two significant figures (whole milliseconds, at least one).
std::vector<int64_t> duration_readings_ms(double measured_ns, double tolerance_ns) {
  std::vector<int64_t> readings;
  const auto add = [&](int64_t ms) {
    ms = std::max<int64_t>(1, ms);
    if (std::find(readings.begin(), readings.end(), ms) == readings.end())
      readings.push_back(ms);
  };
  add(snap_duration_ms(measured_ns / k_ns_per_ms_f, tolerance_ns / k_ns_per_ms_f, std::nullopt).ms);
  add(std::llround(round_significant(measured_ns / k_ns_per_ms_f, 2)));
  return readings;
}

}  // namespace

std::optional<SlowDownSteps> read_recorded_slow_down(
    const std::vector<std::vector<AnsweredRequest>>& identities, int64_t window_ns) {
  std::optional<SlowDownSteps> best;
  for (const std::vector<AnsweredRequest>& admitted : identities) {
    if (admitted.empty())
      continue;
    const int64_t first_sent =
        std::min_element(admitted.begin(), admitted.end(), [](const auto& a, const auto& b) {
          return a.sent_ns < b.sent_ns;
        })->sent_ns;
    std::vector<int64_t> latencies;
    for (const AnsweredRequest& request : admitted) {
      if (window_ns <= 0 || request.sent_ns < first_sent + window_ns)
        latencies.push_back(request.replied_ns - request.sent_ns);
    }
    std::sort(latencies.begin(), latencies.end());
    const std::optional<SlowDownSteps> steps =
        read_slow_down(latencies, k_recorded_slow_down_slack_ns);
    if (!steps)
      continue;
    const auto rank = [](const SlowDownSteps& s) {
      return std::tuple(s.growing, s.cap_ns.has_value());
    };
    if (!best || rank(*steps) > rank(*best))
      best = steps;
  }
  return best;
}

std::optional<int64_t> read_undelayed_excess(
    const std::vector<std::vector<AnsweredRequest>>& identities, int64_t unloaded_ns,
    double per_s) {
  if (per_s <= 0)
    return std::nullopt;
  const auto interval_ns = static_cast<int64_t>(1e9 / per_s);
  const int64_t waited_ns = std::max(k_least_queue_wait_ns, interval_ns / 4);
  std::optional<int64_t> most;
  for (std::vector<AnsweredRequest> admitted : identities) {
    std::stable_sort(admitted.begin(), admitted.end(),
                     [](const auto& a, const auto& b) { return a.sent_ns < b.sent_ns; });
    const auto waited = std::find_if(admitted.begin(), admitted.end(), [&](const auto& request) {
      return request.replied_ns - request.sent_ns - unloaded_ns > waited_ns;
    });
    if (waited == admitted.end() || waited == admitted.begin())
      continue;
    const auto at_once = static_cast<double>(waited - admitted.begin());
    const auto span_s = static_cast<double>((waited - 1)->sent_ns - admitted.front().sent_ns) / 1e9;
    const int64_t excess = std::max<int64_t>(0, std::llround(at_once - 1 - per_s * span_s));
    most = std::max(most.value_or(0), excess);
  }
  return most;
}

bool waits_climb(const std::vector<std::vector<AnsweredRequest>>& identities, int64_t unloaded_ns) {
  for (std::vector<AnsweredRequest> admitted : identities) {
    std::stable_sort(admitted.begin(), admitted.end(),
                     [](const auto& a, const auto& b) { return a.sent_ns < b.sent_ns; });
    const auto wait_of = [&](const AnsweredRequest& request) {
      return std::max<int64_t>(0, request.replied_ns - request.sent_ns - unloaded_ns);
    };
    int64_t fastest = INT64_MAX;
    std::vector<int64_t> behind_others;  // the waits of those sent with 2 or more unanswered
    // The replies of the earlier admissions not yet read at the send in hand, earliest first.
    std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> unanswered;
    for (const AnsweredRequest& request : admitted) {
      while (!unanswered.empty() && unanswered.top() <= request.sent_ns)
        unanswered.pop();
      fastest = std::min(fastest, wait_of(request));
      if (unanswered.size() >= 2)
        behind_others.push_back(wait_of(request));
      unanswered.push(request.replied_ns);
    }
    if (behind_others.size() < 2)
      continue;
    const auto middle =
        behind_others.begin() + static_cast<std::ptrdiff_t>(behind_others.size() / 2);
    std::nth_element(behind_others.begin(), middle, behind_others.end());
    if (*middle >= k_least_queue_wait_ns && *middle > 2 * fastest)
      return true;
  }
  return false;
}

std::vector<ContractFit> slow_down_fits(const std::vector<std::vector<AnsweredRequest>>& identities,
                                        const AdmissionRule& chosen) {
  std::vector<ContractFit> fits;
  if (chosen.window_ns <= 0)
    return fits;
  const std::optional<SlowDownSteps> steps = read_recorded_slow_down(identities, chosen.window_ns);
  if (!steps)
    return fits;
  std::optional<int64_t> max_ms;
  if (steps->cap_ns)
    max_ms = duration_readings_ms(*steps->cap_ns, steps->cap_tolerance_ns).front();
  std::vector<SlowDownRule::Kind> kinds;
  if (chosen.fresh_state)
    kinds.push_back(SlowDownRule::Kind::first_hit);
  kinds.push_back(SlowDownRule::Kind::sliding);
  kinds.push_back(SlowDownRule::Kind::fixed);
  const int64_t window_ms = chosen.window_ns / 1'000'000;
  for (const int64_t step_ms : duration_readings_ms(steps->step_ns, steps->step_tolerance_ns)) {
    for (const SlowDownRule::Kind kind : kinds) {
      config::SlowDown spelled;
      spelled.after = steps->after;
      spelled.window = std::chrono::milliseconds(window_ms);
      spelled.step = std::chrono::milliseconds(step_ms);
      if (max_ms)
        spelled.max = std::chrono::milliseconds(std::max(*max_ms, step_ms));
      spelled.kind = kind == SlowDownRule::Kind::first_hit ? "first-hit"
                     : kind == SlowDownRule::Kind::fixed   ? "fixed"
                                                           : "sliding";
      ContractFit fit;
      fit.contract = "slow-down";
      // A stand-in, as --contract slow-down sets it: the window it counts in.
      fit.rule.kind = AdmissionRule::Kind::sliding;
      fit.rule.limit = steps->after;
      fit.rule.window_ns = spelled.window.count();
      fit.rule.burst = steps->after;
      fit.rule.tokens_per_ns =
          static_cast<double>(steps->after) / static_cast<double>(spelled.window.count());
      fit.rule.clock_ns = chosen.clock_ns;
      fit.rule.fresh_state = chosen.fresh_state;
      fit.limit = steps->after;
      fit.window_ms = window_ms;
      SlowDownRule& rule = fit.slow_down.emplace();
      rule.after = steps->after;
      rule.window_ns = spelled.window.count();
      rule.step_ns = spelled.step.count();
      rule.max_ns = spelled.max ? spelled.max->count() : 0;
      rule.kind = kind;
      rule.clock_ns = chosen.clock_ns;
      fit.flags = "--contract " + config::format_slow_down(spelled);
      fits.push_back(std::move(fit));
    }
  }
  return fits;
}

}  // namespace rlcheck::checks
