#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks/contract_fit.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::admitted_at_once;
using rlcheck::checks::AuditParams;
using rlcheck::checks::CheckParams;
using rlcheck::checks::CheckResult;
using rlcheck::checks::ContractFit;
using rlcheck::checks::ContractPart;
using rlcheck::checks::evaluate_checks;
using rlcheck::checks::fit_candidates;
using rlcheck::checks::fit_consume_on_deny;
using rlcheck::checks::fit_contract;
using rlcheck::checks::note_fit;
using rlcheck::checks::note_race;
using rlcheck::checks::policy_readings;
using rlcheck::checks::RecordedRun;
using rlcheck::checks::refill_text;
using rlcheck::checks::rejudge;
using rlcheck::checks::round_significant;
using rlcheck::checks::RunStats;
using rlcheck::checks::Status;
using rlcheck::checks::summarize_run;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::engine::RunResult;

namespace {

constexpr int64_t k_ms = 1'000'000;

// A limiter simulated at each decision instant: admitted or not, and the hint when denied.
struct Decided {
  bool allowed = false;
  std::optional<int64_t> retry_ms;  // denied: the hint, when the limiter gives one
};
using Limiter = std::function<Decided(int64_t now_ns)>;

// A token bucket of `capacity` refilled `per_s` tokens a second, hinting the wait for a token
// (as lua/token_bucket.lua does).
Limiter token_bucket(double capacity, double per_s) {
  auto tokens = std::make_shared<double>(capacity);
  auto last = std::make_shared<int64_t>(0);
  return [=](int64_t now_ns) {
    const double rate = per_s / 1e9;
    *tokens = std::min(capacity, *tokens + rate * static_cast<double>(now_ns - *last));
    *last = now_ns;
    if (*tokens >= 1) {
      *tokens -= 1;
      return Decided{true, std::nullopt};
    }
    return Decided{false, static_cast<int64_t>(std::ceil((1 - *tokens) / rate / 1e6))};
  };
}

// Symfony's token bucket: `capacity`, `per_tick` tokens at each whole second from its
// creation (its first request), none between; hinting a whole second from now.
Limiter stepped_bucket(int64_t capacity, int64_t per_tick) {
  auto tokens = std::make_shared<int64_t>(capacity);
  auto timer = std::make_shared<std::optional<int64_t>>();
  return [=](int64_t now_ns) {
    constexpr int64_t k_tick_ns = 1'000'000'000;
    if (!*timer)
      *timer = now_ns;
    const int64_t ticks = (now_ns - **timer) / k_tick_ns;
    *tokens = std::min(capacity, *tokens + ticks * per_tick);
    **timer += ticks * k_tick_ns;
    if (*tokens >= 1) {
      --*tokens;
      return Decided{true, std::nullopt};
    }
    return Decided{false, int64_t{1000}};
  };
}

// A sliding log of `limit` per `window_ms`, hinting when the oldest admission leaves.
Limiter sliding_log(int64_t limit, int64_t window_ms) {
  auto log = std::make_shared<std::deque<int64_t>>();
  return [=](int64_t now_ns) {
    const int64_t window_ns = window_ms * k_ms;
    while (!log->empty() && log->front() <= now_ns - window_ns)
      log->pop_front();
    if (static_cast<int64_t>(log->size()) < limit) {
      log->push_back(now_ns);
      return Decided{true, std::nullopt};
    }
    const int64_t wait_ns = log->front() + window_ns - now_ns;
    return Decided{false, (wait_ns + k_ms - 1) / k_ms};
  };
}

// A sliding-window counter of `limit` per `window_ms` on the run's clock (the run starts on a
// boundary), hinting when its estimate drops below the limit.
Limiter sliding_counter(int64_t limit, int64_t window_ms) {
  auto state = std::make_shared<std::array<int64_t, 3>>(std::array<int64_t, 3>{-1, 0, 0});
  return [=](int64_t now_ns) {
    const int64_t window_ns = window_ms * k_ms;
    auto& [current, curr, prev] = *state;
    const int64_t k = now_ns / window_ns;
    if (k != current) {
      prev = k == current + 1 ? curr : 0;
      curr = 0;
      current = k;
    }
    const double start = static_cast<double>(k * window_ns);
    const double f = (static_cast<double>(now_ns) - start) / static_cast<double>(window_ns);
    const auto l = static_cast<double>(limit);
    if (static_cast<double>(prev) * (1 - f) + static_cast<double>(curr) < l) {
      ++curr;
      return Decided{true, std::nullopt};
    }
    const auto c = static_cast<double>(curr);
    const auto w = static_cast<double>(window_ns);
    const double drop =
        c < l ? start + w * (1 - (l - c) / static_cast<double>(prev)) : start + w + w * (1 - l / c);
    return Decided{false, static_cast<int64_t>(std::ceil((drop - static_cast<double>(now_ns)) /
                                                         static_cast<double>(k_ms)))};
  };
}

// A pause in a paced run: no request from `from_ms` until `to_ms`.
struct Pause {
  int64_t from_ms = 0;
  int64_t to_ms = 0;
};

// One request every `every_ms` for `duration_ms` (none during `pause`), decided 0.5 ms after it
// is sent and answered 1 ms after.
RunResult paced_run(Limiter limiter, int64_t every_ms, int64_t duration_ms, Pause pause = {}) {
  RunResult result;
  for (int64_t at = 0, seq = 0; at < duration_ms; at += every_ms) {
    if (at >= pause.from_ms && at < pause.to_ms)
      continue;
    ++seq;
    RequestRecord record;
    record.seq = static_cast<uint64_t>(seq - 1);
    record.sent_ns = at * k_ms;
    record.replied_ns = record.sent_ns + k_ms;
    const Decided decided = limiter(record.sent_ns + k_ms / 2);
    record.outcome = decided.allowed ? Outcome::allowed : Outcome::denied;
    if (!decided.allowed) {
      record.retry_ms = decided.retry_ms;
      record.hint_expected = decided.retry_ms.has_value();
    }
    result.records.push_back(record);
  }
  result.duration_ns = duration_ms * k_ms;
  result.start_wall_ns = 1'700'000'000'000 * k_ms;
  return result;
}

// One request every `every_ms` for `duration_ms` to a queue `depth` deep drained `per_s` a
// second (lua/leaky_queue.lua): an admission leaves at its turn and is answered 1 ms after; a
// denial is answered in 1 ms, but one in `slow_every` in 40 ms, as on a busy machine.
RunResult queued_run(int64_t depth, int64_t per_s, int64_t every_ms, int64_t duration_ms,
                     int64_t slow_every) {
  RunResult result;
  const int64_t drain_ns = 1'000 * k_ms / per_s;
  int64_t last_departure = INT64_MIN / 2;
  int64_t denials = 0;
  for (int64_t at = 0, seq = 0; at < duration_ms; at += every_ms, ++seq) {
    RequestRecord record;
    record.seq = static_cast<uint64_t>(seq);
    record.sent_ns = at * k_ms;
    const int64_t departure = std::max(record.sent_ns, last_departure + drain_ns);
    if (departure - record.sent_ns <= depth * drain_ns) {
      last_departure = departure;
      record.outcome = Outcome::allowed;
      record.replied_ns = departure + k_ms;
    } else {
      record.outcome = Outcome::denied;
      record.replied_ns = record.sent_ns + (++denials % slow_every == 0 ? 40 : 1) * k_ms;
    }
    result.records.push_back(record);
  }
  result.duration_ns = duration_ms * k_ms;
  result.start_wall_ns = 1'700'000'000'000 * k_ms;
  return result;
}

AuditParams sliding_audit(int64_t limit, int64_t window_ms) {
  AuditParams audit;
  audit.rule.kind = AdmissionRule::Kind::sliding;
  audit.rule.limit = limit;
  audit.rule.window_ns = window_ms * k_ms;
  audit.rule.burst = limit;
  audit.rule.tokens_per_ns = static_cast<double>(limit) / static_cast<double>(window_ms * k_ms);
  audit.rule.clock_ns = k_ms;
  audit.max_retry_after_ms = window_ms;
  audit.fresh_state = true;
  return audit;
}

CheckParams sliding_params(int64_t limit, int64_t window_ms, int64_t requests) {
  CheckParams params;
  params.contract = "sliding";
  params.limit = limit;
  params.window_ms = window_ms;
  params.requests = requests;
  params.max_retry_after_ms = 60'000;
  params.key_ttl_applies = false;
  return params;
}

// A test of `runs` paced runs judged as the audit says, as the app judges it.
struct Judged {
  std::vector<RecordedRun> recorded;
  std::vector<RunStats> stats;
  std::vector<CheckResult> checks;
};

Judged judge(const std::function<Limiter()>& make_limiter, int runs, int64_t every_ms,
             int64_t duration_ms, const AuditParams& audit, const CheckParams& params,
             Pause pause = {}) {
  Judged judged;
  for (int run = 1; run <= runs; ++run) {
    RunResult result = paced_run(make_limiter(), every_ms, duration_ms, pause);
    judged.stats.push_back(summarize_run(run, result, audit));
    judged.recorded.push_back({std::move(result.records), result.start_wall_ns});
  }
  judged.checks = evaluate_checks(judged.stats, params);
  return judged;
}

// Sliding logs checked in turn, each taking its place before the next is asked (as
// Flask-Limiter hit()s a route's limits): a request the second denies still counts in the
// first. No hints. `counts_in_first`: false for a limiter that asks every log before any takes
// a place.
Limiter logs_in_turn(int64_t first_limit, int64_t first_ms, int64_t second_limit, int64_t second_ms,
                     bool counts_in_first) {
  auto logs = std::make_shared<std::array<std::deque<int64_t>, 2>>();
  return [=](int64_t now_ns) {
    const std::array<std::pair<int64_t, int64_t>, 2> limits{
        {{first_limit, first_ms * k_ms}, {second_limit, second_ms * k_ms}}};
    bool every_has_room = true;
    for (size_t p = 0; p < 2; ++p) {
      auto& log = (*logs)[p];
      while (!log.empty() && log.front() <= now_ns - limits[p].second)
        log.pop_front();
      if (static_cast<int64_t>(log.size()) >= limits[p].first) {
        every_has_room = false;
        break;
      }
      if (counts_in_first && p == 0)
        log.push_back(now_ns);
    }
    if (!every_has_room)
      return Decided{false, std::nullopt};
    if (!counts_in_first)
      (*logs)[0].push_back(now_ns);
    (*logs)[1].push_back(now_ns);
    return Decided{true, std::nullopt};
  };
}

ContractPart sliding_part(int64_t limit, int64_t window_ms) {
  ContractPart part;
  part.spec = "sliding:" + std::to_string(limit) + "/" + std::to_string(window_ms) + "ms";
  part.name = "sliding";
  part.rule = sliding_audit(limit, window_ms).rule;
  return part;
}

Status status_of(const std::vector<CheckResult>& checks, const std::string& id) {
  const auto it = std::find_if(checks.begin(), checks.end(),
                               [&](const CheckResult& check) { return check.id == id; });
  REQUIRE(it != checks.end());
  return it->status;
}

}  // namespace

TEST_CASE("round_significant keeps the leading digits asked for") {
  CHECK(round_significant(1.0526, 2) == doctest::Approx(1.1));
  CHECK(round_significant(0.98, 1) == doctest::Approx(1.0));
  CHECK(round_significant(4750, 1) == doctest::Approx(5000));
  CHECK(round_significant(0.0371, 2) == doctest::Approx(0.037));
  CHECK(round_significant(0, 2) == 0);
}

TEST_CASE("refill_text spells a rate as --refill reads it, in the fewest whole seconds") {
  CHECK(refill_text(1.0) == "1/s");
  CHECK(refill_text(12.0) == "12/s");
  CHECK(refill_text(0.5) == "1/2s");
  CHECK(refill_text(2.5) == "5/2s");
  CHECK(refill_text(0.37) == "37/100s");
  CHECK(refill_text(1.0 / 60) == "1/1m");
}

TEST_CASE("a token bucket judged as a sliding window fits --contract token-bucket") {
  // The case: capacity 5, 1 token/s, tested as --limit 5 --window 5s at 20/s for 4 s.
  const Judged judged = judge([] { return token_bucket(5, 1); }, 2, 50, 4000,
                              sliding_audit(5, 5000), sliding_params(5, 5000, 80));
  REQUIRE(status_of(judged.checks, "limit") == Status::fail);
  REQUIRE(status_of(judged.checks, "retry-after-accuracy") == Status::fail);

  Judged refit = judged;
  const auto fit = fit_contract(refit.recorded, refit.stats, refit.checks,
                                sliding_params(5, 5000, 80), sliding_audit(5, 5000));
  REQUIRE(fit);
  CHECK(fit->contract == "token-bucket");
  CHECK(fit->burst == 5);
  CHECK(fit->refill == "1/s");
  CHECK(fit->flags == "--contract token-bucket --burst 5 --refill 1/s");
  CHECK(std::find(fit->clears.begin(), fit->clears.end(), "limit") != fit->clears.end());
  CHECK(std::find(fit->clears.begin(), fit->clears.end(), "retry-after-accuracy") !=
        fit->clears.end());
}

TEST_CASE("a queue's depth is read beyond a typical denial, not its slow tail") {
  // Five deep at 20/s, tested as --limit 6 --window 1s at 60/s for 2 s, one denial in 20
  // answered 40 ms late: the longest admission waited 250 ms, five places.
  AuditParams audit = sliding_audit(6, 1000);
  const CheckParams params = sliding_params(6, 1000, 120);
  Judged judged;
  RunResult result = queued_run(5, 20, 16, 2000, 20);
  judged.stats.push_back(summarize_run(1, result, audit));
  judged.recorded.push_back({std::move(result.records), result.start_wall_ns});
  judged.checks = evaluate_checks(judged.stats, params);
  REQUIRE(status_of(judged.checks, "limit") == Status::fail);
  const auto fit = fit_contract(judged.recorded, judged.stats, judged.checks, params, audit);
  REQUIRE(fit);
  CHECK(fit->contract == "queue");
  CHECK(fit->queue == 5);
  CHECK(fit->refill == "20/s");
}

TEST_CASE("a bucket's refill is fitted from the records when it is not the limit per window") {
  // Capacity 4, 2 tokens/s, tested as --limit 4 --window 10s: the limit per window (0.4/s)
  // does not fit; the admission rate after the burst and the hints (500 ms) do.
  const Judged judged = judge([] { return token_bucket(4, 2); }, 1, 50, 3000,
                              sliding_audit(4, 10'000), sliding_params(4, 10'000, 60));
  REQUIRE(status_of(judged.checks, "limit") == Status::fail);
  Judged refit = judged;
  const auto fit = fit_contract(refit.recorded, refit.stats, refit.checks,
                                sliding_params(4, 10'000, 60), sliding_audit(4, 10'000));
  REQUIRE(fit);
  CHECK(fit->flags == "--contract token-bucket --burst 4 --refill 2/s");
}

TEST_CASE("a sliding window longer than the one named fits that window") {
  // 5 per 10 s tested as --window 5s: denials with room and late hints under 5 s.
  const Judged judged = judge([] { return sliding_log(5, 10'000); }, 1, 100, 12'000,
                              sliding_audit(5, 5000), sliding_params(5, 5000, 120));
  REQUIRE(status_of(judged.checks, "utilisation") == Status::fail);
  Judged refit = judged;
  const auto fit = fit_contract(refit.recorded, refit.stats, refit.checks,
                                sliding_params(5, 5000, 120), sliding_audit(5, 5000));
  REQUIRE(fit);
  CHECK(fit->contract == "sliding");
  CHECK(fit->limit == 5);
  CHECK(fit->window_ms == 10'000);
  CHECK(fit->flags == "--contract sliding --limit 5 --window 10s");
  CHECK(std::find(fit->clears.begin(), fit->clears.end(), "utilisation") != fit->clears.end());
}

TEST_CASE("a sliding-window counter judged as a sliding window fits the counter") {
  // 10 per 1 s at 40/s for 4 s: more than 10 in some true windows, hints by its estimate.
  const Judged judged = judge([] { return sliding_counter(10, 1000); }, 1, 25, 4000,
                              sliding_audit(10, 1000), sliding_params(10, 1000, 160));
  REQUIRE(rlcheck::checks::verdict_of(judged.checks) == rlcheck::checks::Verdict::fail);
  Judged refit = judged;
  const auto fit = fit_contract(refit.recorded, refit.stats, refit.checks,
                                sliding_params(10, 1000, 160), sliding_audit(10, 1000));
  REQUIRE(fit);
  CHECK(fit->contract == "sliding-counter");
  CHECK(fit->anchor == "clock");
  CHECK(fit->flags == "--contract sliding-counter --limit 10 --window 1s");
  CHECK_FALSE(fit->clears.empty());
}

TEST_CASE("a limiter that keeps the contract judged gets no fit") {
  Judged judged = judge([] { return sliding_log(5, 5000); }, 1, 100, 12'000, sliding_audit(5, 5000),
                        sliding_params(5, 5000, 120));
  REQUIRE(rlcheck::checks::verdict_of(judged.checks) == rlcheck::checks::Verdict::pass);
  CHECK_FALSE(fit_contract(judged.recorded, judged.stats, judged.checks,
                           sliding_params(5, 5000, 120), sliding_audit(5, 5000)));
}

TEST_CASE("a bucket that refills in steps judged as a sliding window fits --refill K/I,steps") {
  // Burst 10, 5 tokens at each 1 s tick, tested as --limit 10 --window 2s at 20/s for 4 s: 15
  // admitted in 1 s. A smooth bucket would have had tokens between the ticks.
  Judged judged = judge([] { return stepped_bucket(10, 5); }, 1, 50, 4000, sliding_audit(10, 2000),
                        sliding_params(10, 2000, 80));
  REQUIRE(status_of(judged.checks, "limit") == Status::fail);
  const auto fit = fit_contract(judged.recorded, judged.stats, judged.checks,
                                sliding_params(10, 2000, 80), sliding_audit(10, 2000));
  REQUIRE(fit);
  INFO(fit->flags);
  CHECK(fit->contract == "token-bucket");
  CHECK(fit->refill.ends_with(",steps"));
  CHECK(fit->rule.stepped());
}

TEST_CASE("a racy limiter's overshoot fits no larger burst") {
  // A bucket refilling one token per 10 requests whose check-then-act race lets a different
  // first burst through each run: 7, then 9. A burst of 9 would explain the second run, but
  // the first was denied with tokens left; utilisation skips runs this short, the fit does not.
  int run = 0;
  const auto racy = [&run] {
    const int64_t admits = ++run == 1 ? 7 : 9;
    auto seen = std::make_shared<int64_t>(0);
    return Limiter([=](int64_t) {
      const int64_t index = (*seen)++;
      return Decided{index < admits || (index - admits) % 10 == 9, std::nullopt};
    });
  };
  const AuditParams audit = sliding_audit(5, 60'000);
  const CheckParams params = sliding_params(5, 60'000, 40);
  Judged judged = judge(racy, 2, 1, 40, audit, params);
  REQUIRE(status_of(judged.checks, "limit") == Status::fail);
  CHECK_FALSE(fit_contract(judged.recorded, judged.stats, judged.checks, params, audit));
}

TEST_CASE("a burst and then only denials fits nothing: the refill never showed") {
  // The naive counter under concurrency: the first wave all admitted, then every request
  // denied. Any bucket as large as the wave and slow enough fits that; it says nothing.
  const auto burst_then_nothing = [] {
    auto seen = std::make_shared<int64_t>(0);
    return Limiter([=](int64_t) { return Decided{(*seen)++ < 50, std::nullopt}; });
  };
  const AuditParams audit = sliding_audit(10, 60'000);
  const CheckParams params = sliding_params(10, 60'000, 200);
  Judged judged = judge(burst_then_nothing, 4, 1, 200, audit, params);
  REQUIRE(status_of(judged.checks, "limit") == Status::fail);
  CHECK(fit_candidates(judged.recorded, audit.rule).empty());
  CHECK_FALSE(fit_contract(judged.recorded, judged.stats, judged.checks, params, audit));
}

TEST_CASE("a failure no contract decides gets no fit") {
  Judged judged = judge([] { return sliding_log(5, 5000); }, 1, 100, 12'000, sliding_audit(5, 5000),
                        sliding_params(5, 5000, 120));
  for (CheckResult& check : judged.checks) {
    if (check.id == "errors")
      check.status = Status::fail;
  }
  CHECK_FALSE(fit_contract(judged.recorded, judged.stats, judged.checks,
                           sliding_params(5, 5000, 120), sliding_audit(5, 5000)));
}

TEST_CASE("no candidate repeats the contract audited, and fixed windows are not refitted") {
  const Judged judged = judge([] { return token_bucket(5, 1); }, 1, 50, 4000,
                              sliding_audit(5, 5000), sliding_params(5, 5000, 80));
  AdmissionRule fixed = sliding_audit(5, 5000).rule;
  fixed.kind = AdmissionRule::Kind::fixed;
  const std::vector<ContractFit> candidates = fit_candidates(judged.recorded, fixed);
  REQUIRE_FALSE(candidates.empty());
  for (const ContractFit& candidate : candidates)
    CHECK((candidate.contract != "fixed" || candidate.anchor == "first-hit"));

  const std::vector<ContractFit> sliding =
      fit_candidates(judged.recorded, sliding_audit(5, 5000).rule);
  for (const ContractFit& candidate : sliding)
    CHECK(candidate.flags != "--contract sliding --limit 5 --window 5s");
  CHECK(std::any_of(sliding.begin(), sliding.end(),
                    [](const ContractFit& c) { return c.contract == "fixed"; }));
  // Fixed windows opened at the first hit are proposed too, flags and all, where the limiter
  // surely started the run empty, and only there.
  CHECK(std::any_of(sliding.begin(), sliding.end(), [](const ContractFit& c) {
    return c.anchor == "first-hit" &&
           c.flags == "--contract fixed --anchor first-hit --limit 5 --window 5s";
  }));
  AdmissionRule stale = sliding_audit(5, 5000).rule;
  stale.fresh_state = false;
  for (const ContractFit& candidate : fit_candidates(judged.recorded, stale))
    CHECK(candidate.anchor != "first-hit");
}

TEST_CASE("note_fit adds the flags to the checks the fit clears, and only to those") {
  std::vector<CheckResult> checks{{"limit", Status::fail, "over"},
                                  {"errors", Status::fail, "errored"},
                                  {"contract", Status::pass, "fine"}};
  ContractFit fit;
  fit.flags = "--contract token-bucket --burst 5 --refill 1/s";
  fit.clears = {"limit"};
  note_fit(checks, fit);
  CHECK(checks[0].detail ==
        "over; the observations fit --contract token-bucket --burst 5 "
        "--refill 1/s");
  CHECK(checks[1].detail == "errored");
  CHECK(checks[2].detail == "fine");
}

TEST_CASE("a race's burst is not presented as a bigger bucket") {
  // The naive limiter under concurrency, limit 10: 16 admitted while all were in flight at
  // once, then (its key expiring) one more every 6 s. A bucket of 16 refilled 1/6s explains
  // every admission, and is not what happened: the limiter raced.
  RunResult result;
  uint64_t seq = 0;
  for (int i = 0; i < 16; ++i) {
    RequestRecord record;
    record.seq = seq++;
    record.sent_ns = i * k_ms / 10;
    record.replied_ns = 5 * k_ms + i * k_ms / 10;
    record.outcome = Outcome::allowed;
    result.records.push_back(record);
  }
  for (int64_t at = 100; at < 13'000; at += 100) {
    RequestRecord record;
    record.seq = seq++;
    record.sent_ns = at * k_ms;
    record.replied_ns = record.sent_ns + k_ms;
    record.outcome = at % 6000 == 0 ? Outcome::allowed : Outcome::denied;
    result.records.push_back(record);
  }
  result.duration_ns = 13'000 * k_ms;
  result.start_wall_ns = 1'700'000'000'000 * k_ms;
  const AuditParams audit = sliding_audit(10, 60'000);
  const CheckParams params = sliding_params(10, 60'000, static_cast<int64_t>(seq));
  std::vector<RunStats> stats{summarize_run(1, result, audit)};
  std::vector<RecordedRun> recorded;
  recorded.push_back({std::move(result.records), result.start_wall_ns});
  std::vector<CheckResult> checks = evaluate_checks(stats, params);
  REQUIRE(status_of(checks, "limit") == Status::fail);

  CHECK(admitted_at_once(recorded) == 16);
  CHECK(fit_candidates(recorded, audit.rule).empty());
  const auto fit = fit_contract(recorded, stats, checks, params, audit);
  CHECK_MESSAGE(!fit, (fit ? fit->flags : std::string()));

  // The measurement alone: only a serial rerun names a race (runner/serial_rerun).
  note_race(checks, 16, 10);
  for (const CheckResult& check : checks) {
    const bool noted =
        check.detail.find("16 admissions were in flight at once (limit 10)") != std::string::npos;
    CHECK(noted ==
          (check.status == Status::fail && (check.id == "limit" || check.id == "contract")));
    CHECK(check.detail.find("race") == std::string::npos);
  }
}

TEST_CASE("admissions one after another are no race, whatever their number") {
  RunResult result;
  for (uint64_t seq = 0; seq < 16; ++seq) {
    RequestRecord record;
    record.seq = seq;
    record.sent_ns = static_cast<int64_t>(seq) * 2 * k_ms;
    record.replied_ns = record.sent_ns + k_ms;
    record.outcome = Outcome::allowed;
    result.records.push_back(record);
  }
  std::vector<RecordedRun> recorded;
  recorded.push_back({std::move(result.records), 0});
  CHECK(admitted_at_once(recorded) == 1);
}

TEST_CASE("an advertised q per w read as a token bucket explains a bucket of q refilled q per w") {
  // serve --strategy token-bucket --burst 5 --refill 5/s advertises q=5;w=1: judged as a
  // sliding 5 per 1 s it fails (a bucket admits 5 + 5 per second in any second); read as the
  // bucket the policy also means, it explains every admission, denial and hint.
  const AuditParams audit = sliding_audit(5, 1000);
  const CheckParams params = sliding_params(5, 1000, 60);
  Judged judged = judge([] { return token_bucket(5, 5); }, 1, 50, 3000, audit, params);
  REQUIRE(rlcheck::checks::verdict_of(judged.checks) == rlcheck::checks::Verdict::fail);
  const auto readings = policy_readings(5, 1000, audit.rule);
  REQUIRE(readings.size() == 3);
  CHECK(readings[0].flags == "--contract token-bucket --burst 5 --refill 5/s");
  CHECK(readings[1].flags == "--contract fixed --limit 5 --window 1s");
  CHECK(readings[2].flags == "--contract fixed --anchor first-hit --limit 5 --window 1s");
  const auto found = rejudge(readings, judged.recorded, judged.stats, judged.checks, params, audit);
  REQUIRE(found);
  CHECK(found->fit.contract == "token-bucket");
  CHECK(rlcheck::checks::verdict_of(found->checks) == rlcheck::checks::Verdict::pass);

  // A limiter that over-admits under every reading stays failed.
  Judged racy = judge([] { return token_bucket(9, 5); }, 1, 50, 3000, audit, params);
  CHECK_FALSE(rejudge(policy_readings(5, 1000, audit.rule), racy.recorded, racy.stats, racy.checks,
                      params, audit));
}

TEST_CASE("several limits read strictly fit --consume-on-deny checked when a denial counts") {
  // 5 per 1 s then 10 per 4 s at 20/s for 8 s, paused from 2 s to 3.6 s: the first two
  // seconds fill the second log; from 3.6 s five requests take places in the first log before
  // the second denies them, so when the second frees (4 s on) the first is full of those
  // denials until 4.6 s. Read strictly, the denials from 4 s came with room in both; read as
  // counting, none did.
  AuditParams audit = sliding_audit(5, 1000);
  audit.parts = {sliding_part(5, 1000), sliding_part(10, 4000)};
  CheckParams params = sliding_params(5, 1000, 160);
  params.contract = "sliding:5/1000ms + sliding:10/4000ms";
  params.consume_on_deny = "none";
  params.retry_hint_optional = true;
  const auto in_turn = [] { return logs_in_turn(5, 1000, 10, 4000, true); };
  const Pause k_pause{2000, 3600};
  Judged judged = judge(in_turn, 1, 50, 8000, audit, params, k_pause);
  REQUIRE(status_of(judged.checks, "utilisation") == Status::fail);
  const auto fit = fit_consume_on_deny(judged.recorded, judged.stats, judged.checks, params, audit);
  REQUIRE(fit);
  CHECK(fit->flags == "--consume-on-deny checked");
  CHECK(fit->consume_on_deny == "checked");
  CHECK(std::find(fit->clears.begin(), fit->clears.end(), "utilisation") != fit->clears.end());

  // Pasted back: judged as counting from the start, the same limiter passes.
  AuditParams checked = audit;
  checked.parts[0].counts_denials = true;
  CheckParams checked_params = params;
  checked_params.consume_on_deny = "checked";
  const Judged rejudged = judge(in_turn, 1, 50, 8000, checked, checked_params, k_pause);
  CHECK(status_of(rejudged.checks, "utilisation") == Status::pass);
  CHECK(status_of(rejudged.checks, "limit") == Status::pass);

  // A limiter that asks both before either counts passes strictly: nothing to fit.
  Judged strict =
      judge([] { return logs_in_turn(5, 1000, 10, 4000, false); }, 1, 50, 8000, audit, params);
  CHECK(status_of(strict.checks, "utilisation") == Status::pass);
  CHECK_FALSE(fit_consume_on_deny(strict.recorded, strict.stats, strict.checks, params, audit));
}

TEST_CASE("a lock-out no counting of denials explains gets no --consume-on-deny fit") {
  // Correct logs, but every request for 3 s after a denial is denied too (a penalty). The
  // client pauses from 1 s to 2.5 s, longer than the first window: when it comes back, even
  // counting every denial the first log has room, and so does the second (five admissions).
  AuditParams audit = sliding_audit(5, 1000);
  audit.parts = {sliding_part(5, 1000), sliding_part(10, 4000)};
  CheckParams params = sliding_params(5, 1000, 160);
  params.consume_on_deny = "none";
  params.retry_hint_optional = true;
  const auto penalised = [] {
    auto inner = logs_in_turn(5, 1000, 10, 4000, false);
    auto banned_until = std::make_shared<int64_t>(-1);
    return Limiter([=](int64_t now_ns) {
      if (now_ns < *banned_until)
        return Decided{false, std::nullopt};
      const Decided decided = inner(now_ns);
      if (!decided.allowed)
        *banned_until = now_ns + 3000 * k_ms;
      return decided;
    });
  };
  Judged judged = judge(penalised, 1, 50, 8000, audit, params, Pause{1000, 2500});
  REQUIRE(status_of(judged.checks, "utilisation") == Status::fail);
  CHECK_FALSE(fit_consume_on_deny(judged.recorded, judged.stats, judged.checks, params, audit));
}

namespace {

// One request every 50 ms for 3 s to a cap of `cap` requests in progress, each held 390 ms
// from its arrival (0.5 ms after its send) and answered 0.5 ms after its release; a denial is
// answered in 1 ms.
RunResult capped_run(int64_t cap) {
  RunResult result;
  std::vector<int64_t> releases;
  for (int64_t at = 0, seq = 0; at < 3000; at += 50, ++seq) {
    RequestRecord record;
    record.seq = static_cast<uint64_t>(seq);
    record.sent_ns = at * k_ms;
    const int64_t arrival = record.sent_ns + k_ms / 2;
    std::erase_if(releases, [&](int64_t release) { return release <= arrival; });
    if (static_cast<int64_t>(releases.size()) < cap) {
      releases.push_back(arrival + 390 * k_ms);
      record.outcome = Outcome::allowed;
      record.replied_ns = releases.back() + k_ms / 2;
    } else {
      record.outcome = Outcome::denied;
      record.replied_ns = record.sent_ns + k_ms;
    }
    result.records.push_back(record);
  }
  result.duration_ns = 3000 * k_ms;
  result.start_wall_ns = 1'700'000'000'000 * k_ms;
  return result;
}

}  // namespace

TEST_CASE("a concurrency cap judged as a rate fits --contract concurrency, not a window") {
  const AuditParams audit = sliding_audit(2, 1000);
  const CheckParams params = sliding_params(2, 1000, 60);
  Judged judged;
  RunResult result = capped_run(2);
  judged.stats.push_back(summarize_run(1, result, audit));
  judged.recorded.push_back({std::move(result.records), result.start_wall_ns});
  judged.checks = evaluate_checks(judged.stats, params);
  REQUIRE(status_of(judged.checks, "limit") == Status::fail);

  const auto fit = fit_contract(judged.recorded, judged.stats, judged.checks, params, audit);
  REQUIRE(fit);
  CHECK(fit->contract == "concurrency");
  CHECK(fit->concurrency == 2);
  CHECK(fit->flags == "--contract concurrency:2");
  CHECK(std::find(fit->clears.begin(), fit->clears.end(), "limit") != fit->clears.end());

  // A cap of 3: admissions sent with two ahead of them wait no longer than the first did (no
  // queue's staircase), and the cap is fitted as one.
  const AuditParams three_audit = sliding_audit(3, 1000);
  const CheckParams three_params = sliding_params(3, 1000, 60);
  Judged three;
  RunResult three_result = capped_run(3);
  three.stats.push_back(summarize_run(1, three_result, three_audit));
  three.recorded.push_back({std::move(three_result.records), three_result.start_wall_ns});
  three.checks = evaluate_checks(three.stats, three_params);
  REQUIRE(status_of(three.checks, "limit") == Status::fail);
  const auto three_fit =
      fit_contract(three.recorded, three.stats, three.checks, three_params, three_audit);
  REQUIRE(three_fit);
  CHECK(three_fit->flags == "--contract concurrency:3");
}

namespace {

// rack-attack's Allow2Ban: the `limit`-th request in a fixed window of `window_ms` on the
// clock (the run starts on a boundary) is admitted and bans for `ban_ms`; requests during the
// ban are denied, without a hint, and count toward nothing.
Limiter allow2ban(int64_t limit, int64_t window_ms, int64_t ban_ms) {
  auto state = std::make_shared<std::array<int64_t, 3>>(std::array<int64_t, 3>{-1, 0, -1});
  return [=](int64_t now_ns) {
    auto& [current, count, banned_until] = *state;
    if (now_ns < banned_until)
      return Decided{false, std::nullopt};
    const int64_t k = now_ns / (window_ms * k_ms);
    if (k != current) {
      current = k;
      count = 0;
    }
    if (++count >= limit)
      banned_until = now_ns + ban_ms * k_ms;
    return Decided{true, std::nullopt};
  };
}

}  // namespace

TEST_CASE("a ban judged as a window fits --contract ban, which passes pasted back") {
  // 4 requests a second for 8 s: each 3rd of a 2 s window bans for 3 s, whose denials outlast
  // any window of 2 s.
  const AuditParams audit = sliding_audit(3, 2000);
  CheckParams params = sliding_params(3, 2000, 32);
  params.retry_hint_optional = true;
  const auto limiter = [] { return allow2ban(3, 2000, 3000); };
  Judged judged = judge(limiter, 1, 250, 8000, audit, params);
  REQUIRE(status_of(judged.checks, "utilisation") == Status::fail);

  const auto fit = fit_contract(judged.recorded, judged.stats, judged.checks, params, audit);
  REQUIRE(fit);
  CHECK(fit->contract == "ban");
  CHECK(fit->flags == "--contract ban:fixed:3/2s,3s");
  CHECK(fit->ban_ms == 3000);
  CHECK(std::find(fit->clears.begin(), fit->clears.end(), "utilisation") != fit->clears.end());

  // Pasted back, as --contract ban:fixed:3/2s,3s chooses it, the same limiter passes.
  AuditParams banned = audit;
  banned.rule = fit->rule;
  banned.ban = rlcheck::checks::BanRule{3000 * k_ms, false};
  banned.max_retry_after_ms = 3000;
  banned.tolerance.window_ms = 3000;
  CheckParams banned_params = params;
  banned_params.contract = "ban:fixed:3/2s,3s";
  const Judged rejudged = judge(limiter, 1, 250, 8000, banned, banned_params);
  CHECK(status_of(rejudged.checks, "utilisation") == Status::pass);
  CHECK(status_of(rejudged.checks, "contract") == Status::pass);
  CHECK(status_of(rejudged.checks, "limit") == Status::pass);
}

TEST_CASE("denials no longer than a window ask for no ban") {
  // A sliding log's denials end within its window: no ban is among the candidates.
  const AuditParams audit = sliding_audit(2, 1000);
  Judged judged =
      judge([] { return sliding_log(3, 1000); }, 1, 100, 3000, audit, sliding_params(2, 1000, 30));
  for (const ContractFit& fit : fit_candidates(judged.recorded, audit.rule))
    CHECK(fit.contract != "ban");
}
