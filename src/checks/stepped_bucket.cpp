#include "checks/stepped_bucket.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace rlcheck::checks {
namespace {

AdmissionRule smooth_with_burst(const AdmissionRule& rule, int64_t burst) {
  AdmissionRule smooth = rule;
  smooth.burst = std::max<int64_t>(0, burst);
  smooth.step_tokens = 0;
  smooth.step_ns = 0;
  return smooth;
}

int64_t ticks_floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

constexpr int64_t k_store_second_ns = 1'000'000'000;

// first-hit: the bucket's creation lies between the first request's send (any request may
// have reached the limiter first, a lost reply too) and the first admission's reply.
std::optional<TickPhase> first_hit_phase(engine::RecordView records, const AdmissionRule& rule) {
  if (!rule.fresh_state)
    return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> admissions;  // sent, replied
  int64_t first_sent = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < records.size(); ++i) {
    first_sent = std::min(first_sent, records.sent_ns(i));
    if (records.outcome(i) == engine::Outcome::allowed)
      admissions.emplace_back(records.sent_ns(i), records.replied_ns(i));
  }
  if (admissions.empty())
    return std::nullopt;
  std::sort(admissions.begin(), admissions.end());
  // The longest the limiter may have gone without an admission between the first and the
  // last: the longest gap between sends plus the longest send-to-reply.
  int64_t longest_gap = 0;
  int64_t longest_trip = 0;
  int64_t first_replied = std::numeric_limits<int64_t>::max();
  for (size_t k = 0; k < admissions.size(); ++k) {
    const auto [sent, replied] = admissions[k];
    longest_trip = std::max(longest_trip, replied - sent);
    first_replied = std::min(first_replied, replied);
    if (k > 0)
      longest_gap = std::max(longest_gap, sent - admissions[k - 1].first);
  }
  const int64_t kept_ns = (rule.burst + rule.step_tokens - 1) / rule.step_tokens * rule.step_ns;
  const int64_t rounding_ns = std::max(rule.step_ns, k_store_second_ns);
  if (longest_gap + longest_trip + 2 * rule.clock_ns >= kept_ns - rounding_ns)
    return std::nullopt;
  return TickPhase{first_sent, first_replied, rule.step_ns, true};
}

}  // namespace

AdmissionRule most_admitting(const AdmissionRule& rule) {
  if (!rule.stepped())
    return rule;
  return smooth_with_burst(rule, rule.burst + rule.step_tokens);
}

AdmissionRule least_holding(const AdmissionRule& rule) {
  if (!rule.stepped())
    return rule;
  return smooth_with_burst(rule, rule.burst - rule.step_tokens);
}

int64_t TickPhase::most_up_to(int64_t at_ns) const {
  const int64_t ticks = ticks_floor_div(at_ns - earliest_ns, step_ns);
  return from_creation ? std::max<int64_t>(0, ticks) : ticks;
}

int64_t TickPhase::fewest_up_to(int64_t at_ns) const {
  const int64_t ticks = ticks_floor_div(at_ns - latest_ns, step_ns);
  return from_creation ? std::max<int64_t>(0, ticks) : ticks;
}

std::optional<TickPhase> tick_phase(engine::RecordView records, const AdmissionRule& rule) {
  if (!rule.stepped())
    return std::nullopt;
  switch (rule.ticks) {
    case AdmissionRule::Ticks::anywhere:
      return std::nullopt;
    case AdmissionRule::Ticks::clock: {
      // Ticks at wall multiples of I: run time t with start_wall_ns + t = k x I. The limiter's
      // clock is read within clock_ns, which every span already gives either side.
      const int64_t phase =
          -(rule.start_wall_ns - ticks_floor_div(rule.start_wall_ns, rule.step_ns) * rule.step_ns);
      return TickPhase{phase, phase, rule.step_ns};
    }
    case AdmissionRule::Ticks::first_hit:
      return first_hit_phase(records, rule);
  }
  return std::nullopt;
}

}  // namespace rlcheck::checks
