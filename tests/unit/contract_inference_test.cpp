#include <doctest/doctest.h>

#include <vector>

#include "checks/contract_inference.hpp"

using namespace rlcheck::checks;
using rlcheck::engine::Outcome;

namespace {

constexpr int64_t k_ms = 1'000'000;

ProbeRequest allowed(int64_t at_ms) {
  return {at_ms * k_ms, Outcome::allowed, std::nullopt};
}
ProbeRequest denied(int64_t at_ms, std::optional<int64_t> hint = std::nullopt) {
  return {at_ms * k_ms, Outcome::denied, hint};
}

InferredContract window(const char* algorithm, int64_t limit, int64_t window_ms) {
  InferredContract inferred;
  inferred.algorithm = algorithm;
  inferred.limit = limit;
  inferred.window_ms = window_ms;
  return inferred;
}

InferredContract bucket(int64_t burst, double refill) {
  InferredContract inferred;
  inferred.algorithm = "token-bucket";
  inferred.burst = burst;
  inferred.refill_per_s = refill;
  return inferred;
}

}  // namespace

TEST_CASE("count_burst: admissions before the first denial, and that denial's hint") {
  const std::vector<ProbeRequest> burst{allowed(0),     allowed(1), allowed(2),
                                        denied(3, 997), allowed(4), denied(5)};
  const BurstCount count = count_burst(burst);
  CHECK(count.admitted == 3);
  CHECK(count.admitted_total == 4);
  CHECK(*count.first_admitted_ns == 0);
  CHECK(*count.first_denied_ns == 3 * k_ms);
  CHECK(*count.last_denied_ns == 5 * k_ms);
  CHECK(*count.first_hint_ms == 997);
}

TEST_CASE("count_burst: nothing denied leaves the denial unset") {
  const std::vector<ProbeRequest> burst{allowed(0), allowed(1)};
  const BurstCount count = count_burst(burst);
  CHECK(count.admitted == 2);
  CHECK_FALSE(count.first_denied_ns.has_value());
}

TEST_CASE("readmission: the midpoint of its bracket, within half the bracket") {
  const Readmission readmission{990 * k_ms, 1010 * k_ms};
  CHECK(readmission.estimate_ns() == 1000 * k_ms);
  CHECK(readmission.uncertainty_ns() == 10 * k_ms);
  // Replies of 30 and 50 ms: each decided within half of its own, a quarter of both together.
  const Readmission slow{990 * k_ms, 1010 * k_ms, (30 + 50) * k_ms / 4};
  CHECK(slow.estimate_ns() == 1000 * k_ms);
  CHECK(slow.uncertainty_ns() == 30 * k_ms);
}

TEST_CASE("next_probe_ns: geometric steps from the origin, never closer than the minimum") {
  CHECK(next_probe_ns(0, 1000 * k_ms, 0.04, k_ms) == 1040 * k_ms);
  CHECK(next_probe_ns(0, 5 * k_ms, 0.04, k_ms) == 6 * k_ms);
  CHECK(next_probe_ns(500 * k_ms, 1500 * k_ms, 0.04, k_ms) == 1540 * k_ms);
  // About 60 probes from 1 ms to 1 s: a few tens per search, not thousands.
  int probes = 0;
  for (int64_t t = k_ms; t < 1000 * k_ms; t = next_probe_ns(0, t, 0.04, k_ms))
    ++probes;
  CHECK(probes < 150);
}

TEST_CASE("family_after_readmission: a window gives back all its slots, a bucket one token") {
  CHECK(family_after_readmission(5, 4) == Family::window);
  CHECK(family_after_readmission(5, 2) == Family::window);
  CHECK(family_after_readmission(5, 0) == Family::bucket);
  CHECK(family_after_readmission(5, 1) == Family::bucket);
  CHECK(family_after_readmission(2, 1) == Family::window);
  CHECK(family_after_readmission(2, 0) == Family::bucket);
  CHECK(family_after_readmission(1, 0) == Family::unknown);
}

TEST_CASE("window_kind: the spread test tells a fixed window from a sliding one") {
  // A boundary between the single admission and the batch: the batch got the whole limit.
  CHECK(window_kind(5, 5, std::nullopt) == WindowKind::fixed);
  // At the next readmission every slot came back: a boundary.
  CHECK(window_kind(5, 4, 4) == WindowKind::fixed);
  // Only the single admission's slot came back: it slid out of the window.
  CHECK(window_kind(5, 4, 0) == WindowKind::sliding);
}

TEST_CASE("window_between: sliding counts from the readmitted probe, fixed between boundaries") {
  const Readmission first{980 * k_ms, 1000 * k_ms};
  const Readmission second{1990 * k_ms, 2010 * k_ms};
  CHECK(window_between(WindowKind::sliding, first, second) == 1000 * k_ms);
  CHECK(window_between(WindowKind::fixed, first, second) == 1010 * k_ms);
}

TEST_CASE("refill_from: tokens per second from successive single readmissions") {
  const std::vector<int64_t> readmissions{1000 * k_ms, 1200 * k_ms, 1400 * k_ms, 1600 * k_ms};
  CHECK(refill_from(readmissions).value() == doctest::Approx(5.0));
  CHECK_FALSE(refill_from(std::vector<int64_t>{k_ms}).has_value());
}

TEST_CASE("judge_advertised: nothing advertised is neither a match nor a contradiction") {
  const AdvertisedJudgement judgement = judge_advertised(window("sliding", 5, 1000), {});
  CHECK_FALSE(judgement.matches.has_value());
}

TEST_CASE("judge_advertised: a window within the header's rounding and 10 % matches") {
  CHECK(judge_advertised(window("sliding", 5, 1040), {5, 1}).matches == true);
  CHECK(judge_advertised(window("fixed", 5, 2500), {5, 3}).matches == true);
  CHECK(judge_advertised(window("fixed", 5, 1500), {5, 3}).matches == false);
  CHECK(judge_advertised(window("sliding", 5, 1000), {5, std::nullopt}).matches == true);
}

TEST_CASE("judge_advertised: another limit than the one advertised is a contradiction") {
  const AdvertisedJudgement judgement = judge_advertised(window("sliding", 3, 1000), {5, 1});
  CHECK(judgement.matches == false);
  REQUIRE(judgement.reasons.size() == 1);
  CHECK(judgement.reasons.front() == "the headers advertise a limit of 5; 3 were admitted");
}

TEST_CASE("judge_advertised: a limit advertised where nothing limits is a contradiction") {
  InferredContract none;
  none.algorithm = "none";
  CHECK(judge_advertised(none, {5, 1}).matches == false);
  CHECK_FALSE(judge_advertised(none, {}).matches.has_value());
}

TEST_CASE("judge_advertised: a bucket's q per w is its burst and its refill") {
  CHECK(judge_advertised(bucket(5, 4.9), {5, 1}).matches == true);
  CHECK(judge_advertised(bucket(3, 5.0), {5, 1}).matches == false);
  CHECK(judge_advertised(bucket(5, 1.0), {5, 1}).matches == false);
}

TEST_CASE("judge_advertised: an unknown contract is not judged") {
  CHECK_FALSE(judge_advertised(InferredContract{}, {5, 1}).matches.has_value());
}

TEST_CASE("contract_flags: the options that make rlcheck judge this contract, snapped") {
  InferredContract sliding = window("sliding", 5, 992);
  sliding.window_tolerance_ms = 20;
  CHECK(contract_flags(sliding) == "--contract sliding --limit 5 --window 1s");
  // Nothing round within the tolerance: the measurement, to the millisecond.
  CHECK(contract_flags(window("sliding", 5, 1003)) ==
        "--contract sliding --limit 5 --window 1003ms");
  InferredContract first_hit = window("fixed", 3, 2010);
  first_hit.window_tolerance_ms = 40;
  first_hit.anchor = "first-hit";
  CHECK(contract_flags(first_hit) == "--contract fixed --anchor first-hit --limit 3 --window 2s");
  InferredContract clock = window("fixed", 3, 1009);
  clock.window_tolerance_ms = 20;
  clock.anchor = "clock";
  CHECK(contract_flags(clock) == "--contract fixed --limit 3 --window 1s");
  InferredContract tokens = bucket(5, 4.96);
  tokens.refill_interval = RateInterval::around(4.96, 0.03);
  CHECK(contract_flags(tokens) == "--contract token-bucket --burst 5 --refill 5/s");
  CHECK(contract_flags(bucket(5, 4.96)) == "--contract token-bucket --burst 5 --refill 1/202ms");
  CHECK(contract_flags(InferredContract{}).empty());
}

TEST_CASE("contract_flags: the advertised window or rate when the measurement agrees") {
  InferredContract sliding = window("sliding", 5, 1480);
  sliding.window_tolerance_ms = 30;
  CHECK(contract_flags(sliding, {5, 1}) == "--contract sliding --limit 5 --window 1500ms");
  sliding.window_ms = 1980;
  CHECK(contract_flags(sliding, {5, 2}) == "--contract sliding --limit 5 --window 2s");
  InferredContract tokens = bucket(10, 0.168);
  tokens.refill_interval = RateInterval::around(0.168, 0.03);
  CHECK(contract_flags(tokens, {10, 60}) == "--contract token-bucket --burst 10 --refill 10/60s");
  // Advertised values the measurement contradicts are not suggested.
  CHECK(contract_flags(tokens, {10, 1}) == "--contract token-bucket --burst 10 --refill 1/6s");
}

TEST_CASE(
    "snap_duration_ms: advertised, then whole hours, minutes, seconds, 100 ms, 10 ms, else "
    "measured") {
  CHECK(snap_duration_ms(992, 20, std::nullopt).ms == 1000);
  CHECK(snap_duration_ms(992, 20, std::nullopt).basis == "round");
  CHECK(snap_duration_ms(2010, 40, 2000).basis == "advertised");
  CHECK(snap_duration_ms(2010, 40, 3000).ms == 2000);  // 3 s is not within the tolerance
  CHECK(snap_duration_ms(1460, 50, std::nullopt).ms == 1500);
  CHECK(snap_duration_ms(1046, 20, std::nullopt).ms == 1050);
  CHECK(snap_duration_ms(1046, 3, std::nullopt).ms == 1046);
  CHECK(snap_duration_ms(1046, 3, std::nullopt).basis == "measured");
  CHECK(snap_duration_ms(4, 10, std::nullopt).ms == 4);  // never 0
  CHECK(snap_duration_ms(250, 30, std::nullopt).ms == 250);
  // Windows of minutes and hours snap to whole minutes and hours when those fit.
  CHECK(snap_duration_ms(3'608'088, 45'079, std::nullopt).ms == 3'600'000);
  CHECK(snap_duration_ms(119'000, 2'000, std::nullopt).ms == 120'000);
  CHECK(snap_duration_ms(3'608'088, 5'000, std::nullopt).ms == 3'608'000);
}

TEST_CASE(
    "snap_rate: advertised q per w, whole tokens per second, one per whole hours, minutes or "
    "seconds") {
  CHECK(snap_rate(4.9, RateInterval::around(4.9, 0.05), 5, 1).text == "5/s");
  CHECK(snap_rate(4.9, RateInterval::around(4.9, 0.05), 5, 1).basis == "advertised");
  CHECK(snap_rate(7.9, RateInterval::around(7.9, 0.05), 5, 1).text == "8/s");
  CHECK(snap_rate(0.335, RateInterval::around(0.335, 0.05), std::nullopt, std::nullopt).text ==
        "1/3s");
  CHECK(snap_rate(2.5, RateInterval::around(2.5, 0.02), std::nullopt, std::nullopt).text ==
        "1/400ms");
  CHECK(snap_rate(2.5, RateInterval::around(2.5, 0.02), std::nullopt, std::nullopt).per_s ==
        doctest::Approx(2.5));
  // One a minute, one an hour: the whole unit that fits, not the nearest whole second.
  CHECK(
      snap_rate(1 / 60.2, RateInterval::around(1 / 60.2, 0.005), std::nullopt, std::nullopt).text ==
      "1/60s");
  CHECK(snap_rate(1 / 3597.0, RateInterval::around(1 / 3597.0, 0.003), std::nullopt, std::nullopt)
            .text == "1/3600s");
  CHECK(snap_rate(1 / 3597.0, RateInterval::around(1 / 3597.0, 0.0001), std::nullopt, std::nullopt)
            .text == "1/3597s");
}

TEST_CASE("snap_rate: a round rate only inside the interval, which may be lopsided") {
  // 4.79 per second measured, between 4.70 and 4.88: 5/s lies outside, one per 210 ms inside.
  const RateInterval interval{4.70, 4.88};
  CHECK(snap_rate(4.79, interval, std::nullopt, std::nullopt).text == "1/210ms");
  CHECK(snap_rate(4.79, interval, 5, 1).text == "1/210ms");  // advertised, but outside
  CHECK(snap_rate(4.79, {4.70, 5.01}, std::nullopt, std::nullopt).text == "5/s");
  // Wide enough for 10, 11 and 12 per second: no whole number is chosen; 100 ms a token is
  // the coarsest duration inside.
  CHECK(snap_rate(12.0, {9.49, 12.8}, std::nullopt, std::nullopt).text == "1/100ms");
  const SnappedRate narrow = snap_rate(4.79, {4.785, 4.795}, std::nullopt, std::nullopt);
  CHECK(narrow.text == "1/209ms");
  CHECK(narrow.basis == "measured");
}

TEST_CASE("suggest_flags: inside the interval snaps; outside, the measurement and low confidence") {
  InferredContract inside = bucket(5, 4.96);
  inside.refill_interval = {4.85, 5.05};
  inside.confidence = "high";
  CHECK(suggest_flags(inside) == "--contract token-bucket --burst 5 --refill 5/s");
  CHECK(inside.confidence == "high");
  CHECK(inside.notes.empty());

  InferredContract outside = bucket(5, 4.79);
  outside.refill_interval = {4.785, 4.795};
  outside.confidence = "high";
  CHECK(suggest_flags(outside) == "--contract token-bucket --burst 5 --refill 1/209ms");
  CHECK(outside.confidence == "low");
  REQUIRE(outside.notes.size() == 1);
  CHECK(outside.notes[0].find("4.79 measured") != std::string::npos);

  InferredContract window_off = window("sliding", 5, 1046);
  window_off.window_tolerance_ms = 3;
  window_off.confidence = "high";
  CHECK(suggest_flags(window_off) == "--contract sliding --limit 5 --window 1046ms");
  CHECK(window_off.confidence == "low");
}

TEST_CASE("refill_interval: each token between the denial before its admission and the admission") {
  // Tokens every 200 ms, probed every 20 ms on a 1 ms-latency link: each admission seen up to a
  // step late. The first admission has no denial before it: not counted.
  const auto at = [](int64_t ms, Outcome outcome) {
    return ProbeRequest{ms * k_ms, outcome, std::nullopt, k_ms};
  };
  const std::vector<ProbeRequest> timed{
      at(5, Outcome::allowed),   at(185, Outcome::denied),  at(205, Outcome::allowed),
      at(390, Outcome::denied),  at(410, Outcome::allowed), at(595, Outcome::denied),
      at(615, Outcome::allowed), at(800, Outcome::denied),  at(803, Outcome::allowed)};
  const std::optional<RateInterval> interval = refill_interval(timed, k_ms);
  REQUIRE(interval.has_value());
  // Widest: 184.5 ms to 803.5 ms, +2 ms; tightest: 799.5 - 205.5 - 2 ms.
  CHECK(interval->low_per_s == doctest::Approx(3e3 / 621));
  CHECK(interval->high_per_s == doctest::Approx(3e3 / 592));
  CHECK(interval->contains(5.0));
  // Slower replies widen it: the same admissions, each taking 40 ms.
  std::vector<ProbeRequest> slow = timed;
  for (ProbeRequest& request : slow)
    request.latency_ns = 40 * k_ms;
  CHECK(refill_interval(slow, k_ms)->low_per_s < interval->low_per_s);
  CHECK(refill_interval(slow, k_ms)->high_per_s > interval->high_per_s);
  // One slow reply (the last admission's, 150 ms) loosens only the pairs it is part of.
  std::vector<ProbeRequest> one_slow = timed;
  one_slow.back().latency_ns = 150 * k_ms;
  const std::optional<RateInterval> held = refill_interval(one_slow, k_ms);
  REQUIRE(held.has_value());
  CHECK(held->contains(5.0));
  CHECK(held->high_per_s - held->low_per_s < 0.5);
  CHECK_FALSE(
      refill_interval(std::vector<ProbeRequest>{at(0, Outcome::allowed), at(200, Outcome::allowed)},
                      k_ms)
          .has_value());
}

TEST_CASE("first_hit_anchor: readmitted one window after each identity's own first admission") {
  constexpr int64_t w = 1000 * k_ms;
  constexpr int64_t tolerance = 60 * k_ms;
  CHECK(first_hit_anchor(w, tolerance, 1010 * k_ms, 990 * k_ms));
  // A clock boundary came sooner for one of them.
  CHECK_FALSE(first_hit_anchor(w, tolerance, 1010 * k_ms, 400 * k_ms));
  CHECK_FALSE(first_hit_anchor(w, tolerance, 300 * k_ms, 1000 * k_ms));
  // The second identity met a boundary before its readmission search: clock-aligned.
  CHECK_FALSE(first_hit_anchor(w, tolerance, 1000 * k_ms, std::nullopt));
}

TEST_CASE("refill_by_first_readmission: one interval a bucket, a window a first-hit counter") {
  constexpr int64_t interval = 200 * k_ms;
  CHECK(refill_by_first_readmission(5, interval, 205 * k_ms, 0.1) == Refill::token_bucket);
  CHECK(refill_by_first_readmission(5, interval, 990 * k_ms, 0.1) == Refill::counter_first_hit);
  // A counter on the clock: its first boundary anywhere in the window.
  CHECK(refill_by_first_readmission(5, interval, 40 * k_ms, 0.1) == Refill::counter_clock);
  CHECK(refill_by_first_readmission(5, interval, 610 * k_ms, 0.1) == Refill::counter_clock);
  // Later than a window: none of them.
  CHECK(refill_by_first_readmission(5, interval, 1500 * k_ms, 0.1) == Refill::unknown);
  // A limit of 1: all three alike.
  CHECK(refill_by_first_readmission(1, interval, 200 * k_ms, 0.1) == Refill::unknown);
}

TEST_CASE("refill_by_phase: the second identity's readmission names the design") {
  constexpr int64_t interval = 200 * k_ms;  // limit 5: a window of 1 s
  constexpr int64_t boundary = 600 * k_ms;  // halfway: (5 + 1) / 2 intervals
  constexpr int64_t slack = 10 * k_ms;
  CHECK(refill_by_phase(5, interval, boundary, 204 * k_ms, 0.1, slack) == Refill::token_bucket);
  CHECK(refill_by_phase(5, interval, boundary, 1010 * k_ms, 0.1, slack) ==
        Refill::counter_first_hit);
  CHECK(refill_by_phase(5, interval, boundary, 590 * k_ms, 0.1, slack) == Refill::counter_clock);
  // Between the predictions: not clear, not guessed.
  CHECK(refill_by_phase(5, interval, boundary, 400 * k_ms, 0.1, slack) == Refill::unknown);
  // A boundary predicted where a bucket gives back its token: both fit, so neither is named.
  CHECK(refill_by_phase(5, interval, 210 * k_ms, 205 * k_ms, 0.1, slack) == Refill::unknown);
  // A limit of 2: one interval, 1.5 and 2 are still told apart.
  CHECK(refill_by_phase(2, 500 * k_ms, 750 * k_ms, 760 * k_ms, 0.1, slack) ==
        Refill::counter_clock);
  CHECK(refill_by_phase(2, 500 * k_ms, 750 * k_ms, 505 * k_ms, 0.1, slack) == Refill::token_bucket);
}

TEST_CASE("phase_test_start_ns: lead before the first boundary far enough ahead") {
  constexpr int64_t w = 1000 * k_ms;
  // Boundaries at 300, 1300, 2300 ms...
  CHECK(phase_test_start_ns(300 * k_ms, w, 600 * k_ms, 500 * k_ms) == 700 * k_ms);
  CHECK(phase_test_start_ns(300 * k_ms, w, 600 * k_ms, 700 * k_ms) == 700 * k_ms);
  CHECK(phase_test_start_ns(300 * k_ms, w, 600 * k_ms, 701 * k_ms) == 1700 * k_ms);
  CHECK(phase_test_start_ns(300 * k_ms, w, 600 * k_ms, 0) == 700 * k_ms);
  // Lead 0: the first boundary at or after the instant.
  CHECK(phase_test_start_ns(300 * k_ms, w, 0, 1400 * k_ms) == 2300 * k_ms);
}

TEST_CASE("denial counting: the control got in, the identity that kept asking did not") {
  CHECK(counts_denials(Outcome::allowed, Outcome::denied));
  CHECK_FALSE(counts_denials(Outcome::allowed, Outcome::allowed));
  CHECK_FALSE(counts_denials(Outcome::denied, Outcome::denied));
  CHECK_FALSE(counts_denials(Outcome::allowed, Outcome::error));
  // Asked at doubling intervals: some interval outlasts a window restarted on every hit.
  CHECK(control_due_ns(1000 * k_ms, 10 * k_ms, 0) == 1010 * k_ms);
  CHECK(control_due_ns(1000 * k_ms, 10 * k_ms, 1) == 1020 * k_ms);
  CHECK(control_due_ns(1000 * k_ms, 10 * k_ms, 3) == 1080 * k_ms);
}

namespace {

ProbeRequest waited(int64_t at_ms, double latency_ms, Outcome outcome = Outcome::allowed) {
  return {at_ms * k_ms, outcome, std::nullopt, static_cast<int64_t>(latency_ms * 1e6)};
}

}  // namespace

TEST_CASE("waits_one_by_one: every reply after the first waits about an interval") {
  // A queue of 5 per second: the first passes at once, each next one waits its turn.
  std::vector<ProbeRequest> queued{waited(0, 0.4)};
  for (int i = 1; i < 8; ++i)
    queued.push_back(waited(i * 200, 200 + (i % 3)));
  CHECK(waits_one_by_one(queued));
  // Fast replies: a limiter that decides at once.
  std::vector<ProbeRequest> fast;
  for (int i = 0; i < 8; ++i)
    fast.push_back(waited(i, 0.3 + 0.05 * i));
  CHECK_FALSE(waits_one_by_one(fast));
  // A denial: not a queue's way.
  queued[5].outcome = Outcome::denied;
  CHECK_FALSE(waits_one_by_one(queued));
  // Irregular waits (a slow server, not a queue's departures).
  std::vector<ProbeRequest> erratic{waited(0, 0.4)};
  for (int i = 1; i < 8; ++i)
    erratic.push_back(waited(i * 200, i % 2 == 0 ? 20 : 300));
  CHECK_FALSE(waits_one_by_one(erratic));
  CHECK_FALSE(waits_one_by_one(std::vector<ProbeRequest>{waited(0, 0.4), waited(1, 200)}));
}

TEST_CASE("fit_queue: the rate from how waits grow along a burst, the size from denials") {
  // Sent at once to a queue of 5 per second holding 4: the first leaves at once, 4 wait 200,
  // 400, 600, 800 ms, the rest are denied at once.
  std::vector<ProbeRequest> burst;
  for (int i = 0; i < 5; ++i)
    burst.push_back(waited(0, 0.5 + 200.0 * i + (i % 2 ? 3 : -2)));
  for (int i = 5; i < 8; ++i)
    burst.push_back(waited(0, 0.6, Outcome::denied));
  const std::optional<QueueFit> fit = fit_queue(burst);
  REQUIRE(fit.has_value());
  CHECK(fit->rate_per_s == doctest::Approx(5.0).epsilon(0.03));
  CHECK(fit->rate_tolerance < 0.05);
  CHECK(fit->waited == 4);
  CHECK(fit->queue == 4);
  CHECK(fit->denied == 3);
  // Arrived in another order than sent: the same queue.
  std::swap(burst[1], burst[6]);
  std::swap(burst[0], burst[3]);
  const std::optional<QueueFit> shuffled = fit_queue(burst);
  REQUIRE(shuffled.has_value());
  CHECK(shuffled->queue == 4);
  CHECK(shuffled->rate_per_s == doctest::Approx(5.0).epsilon(0.03));
  std::swap(burst[0], burst[3]);
  std::swap(burst[1], burst[6]);
  // One reply read 70 ms late (the last admitted one): the rate holds, its tolerance widens.
  std::vector<ProbeRequest> late = burst;
  late[4].latency_ns += 70 * k_ms;
  const std::optional<QueueFit> held = fit_queue(late);
  REQUIRE(held.has_value());
  CHECK(held->rate_per_s == doctest::Approx(5.0).epsilon(0.03));
  CHECK(held->rate_tolerance > fit->rate_tolerance);
  // Nothing denied: how many may wait is only bounded.
  burst.resize(5);
  const std::optional<QueueFit> open = fit_queue(burst);
  REQUIRE(open.has_value());
  CHECK_FALSE(open->queue.has_value());
  CHECK(open->waited == 4);
}

TEST_CASE("fit_queue: no line, no queue") {
  // Every reply fast: nothing waited.
  std::vector<ProbeRequest> fast;
  for (int i = 0; i < 8; ++i)
    fast.push_back(waited(0, 0.5));
  CHECK_FALSE(fit_queue(fast).has_value());
  // Waits that do not line up: a few slow, the rest fast.
  std::vector<ProbeRequest> lumpy;
  for (int i = 0; i < 8; ++i)
    lumpy.push_back(waited(0, i < 6 ? 1.0 : 400.0));
  CHECK_FALSE(fit_queue(lumpy).has_value());
  // Too few admitted to fit a line.
  CHECK_FALSE(fit_queue(std::vector<ProbeRequest>{waited(0, 0.5), waited(0, 200),
                                                  waited(0, 0.5, Outcome::denied)})
                  .has_value());
}

TEST_CASE("contract_flags: sliding-window counters, queues, and none for denial counting") {
  InferredContract counter = window("sliding-counter", 5, 982);
  counter.window_tolerance_ms = 28;
  counter.anchor = "clock";
  CHECK(contract_flags(counter) == "--contract sliding-counter --limit 5 --window 1s");
  counter.anchor = "first-hit";
  CHECK(contract_flags(counter) ==
        "--contract sliding-counter --anchor first-hit --limit 5 --window 1s");
  InferredContract queue;
  queue.algorithm = "queue";
  queue.refill_per_s = 4.93;
  queue.refill_interval = RateInterval::around(4.93, 0.05);
  queue.queue = 4;
  CHECK(contract_flags(queue) == "--contract queue --refill 5/s --queue 4");
  queue.queue.reset();
  CHECK(contract_flags(queue).empty());
  InferredContract locked = window("denial-counting", 3, 1000);
  locked.denial_counting = true;
  CHECK(contract_flags(locked).empty());
}

TEST_CASE("judge_advertised: a sliding-window counter's limit and window, a queue not at all") {
  CHECK(judge_advertised(window("sliding-counter", 5, 1006), {5, 1}).matches == true);
  CHECK(judge_advertised(window("sliding-counter", 3, 1006), {5, 1}).matches == false);
  CHECK(judge_advertised(window("sliding-counter", 5, 2000), {5, 1}).matches == false);
  InferredContract queue;
  queue.algorithm = "queue";
  queue.refill_per_s = 5;
  CHECK_FALSE(judge_advertised(queue, {5, 1}).matches.has_value());
}

TEST_CASE("probe flags: a concurrency cap, a ban and a bucket refilled in steps, snapped") {
  InferredContract cap;
  cap.algorithm = "concurrency";
  cap.limit = 2;
  cap.hold_ms = 401;
  CHECK(contract_flags(cap) == "--contract concurrency:2");
  CHECK(contract_spec(cap) == "concurrency:2");

  InferredContract ban;
  ban.algorithm = "ban";
  ban.limit = 3;
  ban.inner = "fixed";
  ban.window_ms = 2000;
  ban.ban_ms = 2961;
  ban.ban_tolerance_ms = 80;
  CHECK(contract_flags(ban) == "--contract ban:fixed:3/2s,3s");
  // Nothing round within the measurement: the measurement itself, and the confidence drops.
  ban.ban_ms = 2457;
  ban.ban_tolerance_ms = 2;
  ban.confidence = "high";
  CHECK(suggest_flags(ban) == "--contract ban:fixed:3/2s,2457ms");
  CHECK(ban.confidence == "low");

  InferredContract steps;
  steps.algorithm = "token-bucket";
  steps.burst = 10;
  steps.refill_per_s = 4.9;
  steps.step_tokens = 5;
  steps.step_interval_ms = 1021;
  steps.step_interval_tolerance_ms = 95;
  CHECK(contract_flags(steps) == "--contract token-bucket --burst 10 --refill 5/1s,steps");
  CHECK(contract_spec(steps) == "token-bucket:10,5/1s,steps");
}
