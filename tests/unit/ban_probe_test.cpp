#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "checks/ban_probe.hpp"
#include "checks/step_probe.hpp"

using namespace rlcheck::checks;
using rlcheck::engine::Outcome;

namespace {

constexpr int64_t k_ms = 1'000'000;

ProbeRequest at(int64_t ms, Outcome outcome) {
  return {ms * k_ms, outcome, std::nullopt, 0};
}

// `admitted` admissions then `denied` denials, a ms apart from `from_ms`.
std::vector<ProbeRequest> burst(int64_t from_ms, int admitted, int denied) {
  std::vector<ProbeRequest> requests;
  for (int i = 0; i < admitted + denied; ++i)
    requests.push_back(at(from_ms + i, i < admitted ? Outcome::allowed : Outcome::denied));
  return requests;
}

}  // namespace

TEST_CASE("ban probe: a trial's second part found the first forgotten when it admitted L") {
  CHECK(trial_forgot(3, burst(0, 3, 1)));
  CHECK_FALSE(trial_forgot(3, burst(0, 1, 3)));
}

TEST_CASE(
    "ban probe: a ban runs from the trigger (last admission or first denial) to readmission") {
  // 3 admitted at 0-2 ms, denied from 3 ms; denied at 2950 ms, admitted at 3050 ms.
  const Readmission readmitted{2950 * k_ms, 3050 * k_ms, 0};
  const std::optional<Bracket> ban = ban_from(burst(0, 3, 5), readmitted, 2 * k_ms);
  REQUIRE(ban);
  CHECK(ban->low_ns == (2950 - 3 - 2) * k_ms);
  CHECK(ban->high_ns == (3050 - 2 + 2) * k_ms);
  CHECK_FALSE(ban_from(burst(0, 3, 0), readmitted, 0));
  // Two readings: where both allow, or nothing when they do not meet.
  CHECK(both({1 * k_ms, 5 * k_ms}, {3 * k_ms, 9 * k_ms})->low_ns == 3 * k_ms);
  CHECK_FALSE(both({1 * k_ms, 2 * k_ms}, {3 * k_ms, 9 * k_ms}));
}

namespace {

// Stages of trials from `starts` (ms on the wall clock), gaps growing by 250 ms until one
// forgets: by a sliding window of `sliding_ms`, else by a boundary at the multiples of
// `fixed_ms`.
std::vector<BanTrial> stages(const std::vector<int64_t>& starts, int64_t sliding_ms,
                             int64_t fixed_ms) {
  std::vector<BanTrial> trials;
  for (const int64_t start : starts) {
    for (int64_t gap = 250; gap <= 4000; gap += 250) {
      BanTrial trial{start * k_ms, (start + 1) * k_ms, (start + 1 + gap) * k_ms,
                     (start + 3 + gap) * k_ms, false};
      trial.forgot =
          sliding_ms ? gap > sliding_ms : (start / fixed_ms) != ((start + 3 + gap) / fixed_ms);
      trials.push_back(trial);
      if (trial.forgot)
        break;
    }
  }
  return trials;
}

}  // namespace

TEST_CASE("ban probe: what counts slides when every start forgets alike, else it is fixed") {
  const int64_t slack = 5 * k_ms;
  const std::vector<int64_t> starts{1'000'000'300, 1'000'003'700, 1'000'006'900};
  std::string why_not;
  const auto sliding = read_inner_window(stages(starts, 2000, 0), 6000 * k_ms, slack, why_not);
  REQUIRE(sliding);
  CHECK(sliding->kind == "sliding");
  CHECK(sliding->window.low_ns <= 2000 * k_ms);
  CHECK(sliding->window.high_ns >= 2000 * k_ms);
  const auto fixed = read_inner_window(stages(starts, 0, 2000), 6000 * k_ms, slack, why_not);
  REQUIRE(fixed);
  CHECK(fixed->kind == "fixed");
  CHECK(fixed->window.low_ns == 2000 * k_ms);
  // One start alone cannot tell a sliding window from a boundary that came as late.
  CHECK_FALSE(read_inner_window(stages({1'000'000'000}, 0, 2000), 6000 * k_ms, slack, why_not));
  CHECK(why_not.find("fit every trial") != std::string::npos);
  // Nothing forgotten: nothing read.
  CHECK_FALSE(read_inner_window(stages(starts, 9000, 0), 6000 * k_ms, slack, why_not));
}

TEST_CASE("step probe: runs of admissions a tick apart read as the tokens of a tick") {
  // Probed every 100 ms once drained: 5 admitted at 2000-2400 ms, then 5 more from 3000 ms.
  std::vector<ProbeRequest> requests;
  for (int64_t t = 2000; t <= 3600; t += 100) {
    const bool admitted = (t < 2500) || (t >= 3000 && t < 3500);
    requests.push_back(at(t, admitted ? Outcome::allowed : Outcome::denied));
  }
  CHECK(admits_in_a_row(requests));
  const std::optional<StepReading> steps = read_steps(1900 * k_ms, requests);
  REQUIRE(steps);
  CHECK(steps->tokens == 5);
  CHECK(steps->first_tokens == 5);
  CHECK(steps->interval.low_ns == 900 * k_ms);    // 2900 - 2000
  CHECK(steps->interval.high_ns == 1100 * k_ms);  // 3000 - 1900
  // The second run not yet ended: nothing read.
  requests.resize(13);
  CHECK_FALSE(read_steps(1900 * k_ms, requests));
  // One at a time, as a smooth bucket gives them back.
  CHECK_FALSE(admits_in_a_row(std::vector<ProbeRequest>{
      at(0, Outcome::allowed), at(1, Outcome::denied), at(2, Outcome::allowed)}));
}
