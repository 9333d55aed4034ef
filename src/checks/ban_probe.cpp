#include "checks/ban_probe.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace rlcheck::checks {

bool trial_forgot(int64_t limit, std::span<const ProbeRequest> second_part) {
  return count_burst(second_part).admitted >= limit;
}

std::optional<Bracket> ban_from(std::span<const ProbeRequest> triggering,
                                const Readmission& readmitted, int64_t slack_ns) {
  std::optional<int64_t> last_admitted;
  std::optional<int64_t> first_denied;
  for (const ProbeRequest& request : triggering) {
    if (request.outcome == engine::Outcome::denied) {
      first_denied = request.at_ns;
      break;
    }
    if (request.outcome == engine::Outcome::allowed)
      last_admitted = request.at_ns;
  }
  if (!first_denied || !last_admitted)
    return std::nullopt;
  const int64_t slack = slack_ns + readmitted.latency_slack_ns;
  return Bracket{std::max<int64_t>(0, readmitted.last_denied_ns - *first_denied - slack),
                 readmitted.admitted_ns - *last_admitted + slack};
}

std::optional<Bracket> both(const Bracket& a, const Bracket& b) {
  const Bracket common{std::max(a.low_ns, b.low_ns), std::min(a.high_ns, b.high_ns)};
  if (common.low_ns > common.high_ns)
    return std::nullopt;
  return common;
}

namespace {

// Whether a multiple of `window_ns` lies in (from_ns, to_ns).
bool boundary_between(int64_t from_ns, int64_t to_ns, int64_t window_ns) {
  if (to_ns <= from_ns)
    return false;
  const int64_t next = (from_ns / window_ns + 1) * window_ns;
  return next < to_ns;
}

bool fixed_fits(std::span<const BanTrial> trials, int64_t window_ns, int64_t slack_ns) {
  for (const BanTrial& trial : trials) {
    if (trial.forgot &&
        !boundary_between(trial.first_from_ns - slack_ns, trial.counted_ns + slack_ns, window_ns))
      return false;
    if (!trial.forgot &&
        boundary_between(trial.first_to_ns + slack_ns, trial.second_from_ns - slack_ns, window_ns))
      return false;
  }
  return true;
}

}  // namespace

std::optional<InnerWindow> read_inner_window(std::span<const BanTrial> trials, int64_t longest_ns,
                                             int64_t slack_ns, std::string& why_not) {
  const bool any_kept =
      std::any_of(trials.begin(), trials.end(), [](const BanTrial& t) { return !t.forgot; });
  const bool any_forgot =
      std::any_of(trials.begin(), trials.end(), [](const BanTrial& t) { return t.forgot; });
  if (!any_kept || !any_forgot) {
    why_not = any_forgot ? "every trial forgot its first part" : "no trial forgot its first part";
    return std::nullopt;
  }
  // Sliding: longer than every gap kept, no longer than any gap forgotten.
  int64_t low = 0;
  int64_t high = std::numeric_limits<int64_t>::max();
  for (const BanTrial& trial : trials) {
    if (trial.forgot)
      high = std::min(high, trial.counted_ns - trial.first_from_ns + slack_ns);
    else
      low = std::max(low, trial.second_from_ns - trial.first_to_ns - slack_ns);
  }
  const bool sliding = low < high;
  // Windows fixed on the clock, at every 100 ms: the roundest that fit, when they are one (a
  // whole number of seconds first, as limiters are configured), as durations are snapped.
  constexpr int64_t k_grid_ns = 100'000'000;
  constexpr int64_t k_second_ns = 1'000'000'000;
  std::vector<int64_t> fitting;
  for (int64_t window = k_grid_ns; window <= longest_ns; window += k_grid_ns) {
    if (fixed_fits(trials, window, slack_ns))
      fitting.push_back(window);
  }
  const auto whole = std::count_if(fitting.begin(), fitting.end(),
                                   [](int64_t window) { return window % k_second_ns == 0; });
  std::optional<int64_t> fixed;
  if (whole == 1) {
    fixed = *std::find_if(fitting.begin(), fitting.end(),
                          [](int64_t window) { return window % k_second_ns == 0; });
  } else if (whole == 0 && fitting.size() == 1) {
    fixed = fitting.front();
  }
  if (sliding && fitting.empty())
    return InnerWindow{"sliding", {low, high}};
  if (!sliding && fixed)
    return InnerWindow{"fixed", {*fixed, *fixed}};
  if (!sliding && fitting.empty()) {
    why_not = "neither a sliding window nor one fixed on the clock fits every trial";
  } else if (sliding) {
    why_not =
        fmt::format("a sliding window and {} fixed on the clock fit every trial", fitting.size());
  } else {
    why_not = fmt::format("{} windows fixed on the clock fit every trial", fitting.size());
  }
  return std::nullopt;
}

}  // namespace rlcheck::checks
