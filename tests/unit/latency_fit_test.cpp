#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checks/contract_fit.hpp"
#include "checks/latency_fit.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::AnsweredRequest;
using rlcheck::checks::AuditParams;
using rlcheck::checks::CheckParams;
using rlcheck::checks::ContractFit;
using rlcheck::checks::evaluate_checks;
using rlcheck::checks::fit_contract;
using rlcheck::checks::read_recorded_slow_down;
using rlcheck::checks::read_undelayed_excess;
using rlcheck::checks::RecordedRun;
using rlcheck::checks::rejudge;
using rlcheck::checks::RunStats;
using rlcheck::checks::slow_down_fits;
using rlcheck::checks::SlowDownRule;
using rlcheck::checks::Status;
using rlcheck::checks::summarize_run;
using rlcheck::checks::waits_climb;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::engine::RunResult;

namespace {

constexpr int64_t k_lat_ms = 1'000'000;

// express-slow-down's shape: past `after` in a window opened by the first request, the k-th is
// answered (k - after) x `step_ms` late, up to `max_ms` (0: uncapped); 1 ms unloaded. One
// request every `every_ms`, `count` of them, all within one window.
std::vector<AnsweredRequest> slowed(int64_t count, int64_t every_ms, int64_t after, int64_t step_ms,
                                    int64_t max_ms) {
  std::vector<AnsweredRequest> requests;
  for (int64_t k = 1; k <= count; ++k) {
    int64_t delay_ms = std::max<int64_t>(0, (k - after) * step_ms);
    if (max_ms > 0)
      delay_ms = std::min(delay_ms, max_ms);
    const int64_t sent = (k - 1) * every_ms * k_lat_ms;
    requests.push_back({sent, sent + (1 + delay_ms) * k_lat_ms});
  }
  return requests;
}

// nginx's limit_req at `per_s` a second, burst `burst`, delay `nodelay` (excess counted in
// requests, leaking at the rate since the last admission; a new key passes at once): one
// request every `every_ms` for `count` requests, admissions answered 1 ms after they leave,
// denials 1 ms after their send.
RunResult two_stage_run(double per_s, double burst, double nodelay, int64_t every_ms,
                        int64_t count) {
  RunResult result;
  std::optional<double> excess;
  int64_t last_ns = 0;
  for (int64_t seq = 0; seq < count; ++seq) {
    RequestRecord record;
    record.seq = static_cast<uint64_t>(seq);
    record.sent_ns = seq * every_ms * k_lat_ms;
    double now = 0;
    if (excess) {
      now =
          std::max(0.0, *excess - per_s * static_cast<double>(record.sent_ns - last_ns) / 1e9) + 1;
    }
    if (now > burst) {
      record.outcome = Outcome::denied;
      record.replied_ns = record.sent_ns + k_lat_ms;
    } else {
      excess = now;
      last_ns = record.sent_ns;
      const double wait_s = now > nodelay ? (now - nodelay) / per_s : 0;
      record.outcome = Outcome::allowed;
      record.replied_ns = record.sent_ns + static_cast<int64_t>(wait_s * 1e9) + k_lat_ms;
    }
    result.records.push_back(record);
  }
  result.duration_ns = count * every_ms * k_lat_ms;
  result.start_wall_ns = 1'700'000'000'000 * k_lat_ms;
  return result;
}

// nginx's limit_req as it runs (ngx_http_limit_req_lookup): 10r/s, burst=8, delay=`nodelay`;
// a key's excess in thousandths of a request, drained over whole ms since its last admission,
// one more per request and then floored at 0 (a new key passes at once with none); past 8
// denied, at most `nodelay` passed at once, the rest answered after (excess - nodelay) / 10 s.
// Two identities at 20 a second each, 25 ms apart, for 2 s (as --identities 2 --rate 40/s
// sends them); nginx reads the k-th request of an identity `clock_ms(identity, k)` after its
// send, and answers 0.1 ms after its turn, read `late_ms(identity, k, allowed)` later still:
// what a loaded machine added to reading that reply.
using PerRequest = std::function<int64_t(uint32_t identity, int64_t k)>;
using ReadLate = std::function<int64_t(uint32_t identity, int64_t k, bool allowed)>;
RunResult nginx_queue_run(
    int64_t nodelay, const ReadLate& late_ms,
    const PerRequest& clock_ms = [](uint32_t, int64_t) { return 0; }) {
  constexpr int64_t k_rate = 10'000;  // nginx's rate: requests a second, in thousandths
  constexpr int64_t k_burst = 8'000;
  RunResult result;
  std::array<std::optional<int64_t>, 2> excess;
  std::array<int64_t, 2> last_ms{0, 0};
  uint64_t seq = 0;
  for (int64_t k = 0; k < 40; ++k) {
    for (uint32_t identity = 0; identity < 2; ++identity) {
      const int64_t sent_ms = 50 * k + 25 * identity;
      const int64_t now_ms = sent_ms + clock_ms(identity, k);
      RequestRecord record;
      record.seq = seq++;
      record.identity = identity;
      record.sent_ns = sent_ms * k_lat_ms;
      std::optional<int64_t>& held = excess[identity];
      const int64_t after =
          held ? std::max<int64_t>(0, *held - k_rate * (now_ms - last_ms[identity]) / 1000 + 1000)
               : 0;
      int64_t wait_ms = 0;
      record.outcome = after > k_burst ? Outcome::denied : Outcome::allowed;
      if (record.outcome == Outcome::allowed) {
        held = after;
        last_ms[identity] = now_ms;
        wait_ms = std::max<int64_t>(0, after - nodelay * 1000) * 1000 / k_rate;
      }
      const int64_t read_ms = late_ms(identity, k, record.outcome == Outcome::allowed);
      record.replied_ns = (now_ms + wait_ms + read_ms) * k_lat_ms + k_lat_ms / 10;
      result.records.push_back(record);
    }
  }
  result.duration_ns = 2000 * k_lat_ms;
  result.start_wall_ns = 1'700'000'000'000 * k_lat_ms;
  return result;
}

RunResult slowed_run(const std::vector<AnsweredRequest>& requests) {
  RunResult result;
  uint64_t seq = 0;
  for (const AnsweredRequest& request : requests) {
    RequestRecord record;
    record.seq = seq++;
    record.sent_ns = request.sent_ns;
    record.replied_ns = request.replied_ns;
    record.outcome = Outcome::allowed;
    result.records.push_back(record);
  }
  result.duration_ns = requests.back().replied_ns;
  result.start_wall_ns = 1'700'000'000'000 * k_lat_ms;
  return result;
}

AuditParams window_audit(int64_t limit, int64_t window_ms) {
  AuditParams audit;
  audit.rule.kind = AdmissionRule::Kind::sliding;
  audit.rule.limit = limit;
  audit.rule.window_ns = window_ms * k_lat_ms;
  audit.rule.burst = limit;
  audit.rule.tokens_per_ns = static_cast<double>(limit) / static_cast<double>(window_ms * k_lat_ms);
  audit.rule.clock_ns = k_lat_ms;
  audit.rule.fresh_state = true;
  audit.max_retry_after_ms = window_ms;
  audit.fresh_state = true;
  return audit;
}

CheckParams window_params(int64_t limit, int64_t window_ms, int64_t requests) {
  CheckParams params;
  params.contract = "sliding";
  params.limit = limit;
  params.window_ms = window_ms;
  params.requests = requests;
  params.retry_hint_optional = true;
  params.key_ttl_applies = false;
  params.fresh_state = true;
  return params;
}

struct JudgedRun {
  std::vector<RecordedRun> recorded;
  std::vector<RunStats> stats;
  std::vector<rlcheck::checks::CheckResult> checks;
};

JudgedRun judged_run(RunResult result, const AuditParams& audit, const CheckParams& params) {
  JudgedRun judged;
  judged.stats.push_back(summarize_run(1, result, audit));
  judged.recorded.push_back({std::move(result.records), result.start_wall_ns});
  judged.checks = evaluate_checks(judged.stats, params);
  return judged;
}

bool clears(const ContractFit& fit, const std::string& id) {
  return std::find(fit.clears.begin(), fit.clears.end(), id) != fit.clears.end();
}

}  // namespace

TEST_CASE("latency fit: a slow-down is read from a run's admissions, ranked by latency") {
  // 14 sent at once: by rank, 3 unloaded, then 100 ms more each up to 1 s.
  std::vector<AnsweredRequest> at_once = slowed(14, 0, 3, 100, 1000);
  std::reverse(at_once.begin(), at_once.end());  // the order they were recorded in is no guide
  const auto steps = read_recorded_slow_down({at_once}, 3000 * k_lat_ms);
  REQUIRE(steps);
  CHECK(steps->after == 3);
  CHECK(steps->step_ns == doctest::Approx(100.0 * k_lat_ms).epsilon(0.01));
  REQUIRE(steps->cap_ns);
  CHECK(*steps->cap_ns == doctest::Approx(1000.0 * k_lat_ms).epsilon(0.01));

  // One at a time, 8 of them: the delays never stop growing, no cap.
  const auto serial = read_recorded_slow_down({slowed(8, 600, 3, 100, 1000)}, 10'000 * k_lat_ms);
  REQUIRE(serial);
  CHECK(serial->growing == 5);
  CHECK(!serial->cap_ns);

  // Of two identities, the one with more delayed requests; a request past the window judged
  // (fast again, its count restarted) is left out.
  std::vector<AnsweredRequest> later = slowed(6, 0, 3, 100, 0);
  later.push_back({3500 * k_lat_ms, 3501 * k_lat_ms});
  const auto both = read_recorded_slow_down({later, at_once}, 3000 * k_lat_ms);
  REQUIRE(both);
  CHECK(both->growing + (both->cap_ns ? 1 : 0) >= 10);
  CHECK(read_recorded_slow_down({later}, 3000 * k_lat_ms)->growing == 3);

  // Latencies that do not grow: no slow-down.
  CHECK(!read_recorded_slow_down({slowed(10, 0, 20, 100, 0)}, 3000 * k_lat_ms));
}

TEST_CASE("latency fit: slow-down candidates snap step and cap, first-hit first on fresh state") {
  AdmissionRule chosen = window_audit(3, 3000).rule;
  std::vector<AnsweredRequest> requests = slowed(14, 0, 3, 100, 1000);
  // A machine's jitter: a few ms here and there.
  requests[5].replied_ns += 3 * k_lat_ms;
  requests[9].replied_ns -= 2 * k_lat_ms;
  const std::vector<ContractFit> fits = slow_down_fits({requests}, chosen);
  REQUIRE(fits.size() >= 3);
  CHECK(fits[0].flags == "--contract slow-down:first-hit:3/3s,100ms,1s");
  CHECK(fits[1].flags == "--contract slow-down:3/3s,100ms,1s");
  CHECK(fits[2].flags == "--contract slow-down:fixed:3/3s,100ms,1s");
  REQUIRE(fits[0].slow_down);
  CHECK(fits[0].slow_down->kind == SlowDownRule::Kind::first_hit);
  CHECK(fits[0].slow_down->max_ns == 1000 * k_lat_ms);

  // State it cannot vouch for: no first-hit reading. No cap seen: none named.
  chosen.fresh_state = false;
  const std::vector<ContractFit> uncapped = slow_down_fits({slowed(8, 600, 3, 100, 0)}, chosen);
  REQUIRE(!uncapped.empty());
  CHECK(uncapped[0].flags == "--contract slow-down:3/3s,100ms");
  CHECK(uncapped[0].slow_down->max_ns == 0);
}

TEST_CASE("latency fit: a slow-down judged as a window fits its slow-down, which replays") {
  // 14 sent 50 ms apart on fresh state, judged as 3 per 3 s: limit and contract fail.
  const AuditParams audit = window_audit(3, 3000);
  const CheckParams params = window_params(3, 3000, 14);
  JudgedRun judged = judged_run(slowed_run(slowed(14, 50, 3, 100, 1000)), audit, params);
  const auto fit = fit_contract(judged.recorded, judged.stats, judged.checks, params, audit);
  REQUIRE(fit);
  CHECK(fit->contract == "slow-down");
  CHECK(fit->flags == "--contract slow-down:first-hit:3/3s,100ms,1s");
  CHECK(clears(*fit, "contract"));
  CHECK(clears(*fit, "limit"));  // skipped under a slow-down, which admits every request

  // A limiter slowing down half as much fits the half step, not the one named.
  JudgedRun half = judged_run(slowed_run(slowed(14, 50, 3, 50, 500)), audit, params);
  const auto halved = fit_contract(half.recorded, half.stats, half.checks, params, audit);
  REQUIRE(halved);
  CHECK(halved->flags == "--contract slow-down:first-hit:3/3s,50ms,500ms");
}

TEST_CASE("latency fit: a queue's undelayed part is read past what the rate drained") {
  const int64_t unloaded = k_lat_ms;
  // A burst at once: 4 answered at once (the first and 3 excess), then one each 100 ms.
  std::vector<AnsweredRequest> burst;
  for (int i = 0; i < 9; ++i)
    burst.push_back({0, (1 + std::max(0, i - 3) * 100) * k_lat_ms});
  CHECK(read_undelayed_excess({burst}, unloaded, 10) == 3);
  // 20 a second: 7 at once over 300 ms, of which the rate drained 3.
  RunResult paced = two_stage_run(10, 8, 3, 50, 40);
  std::vector<AnsweredRequest> admitted;
  for (const RequestRecord& record : paced.records) {
    if (record.outcome == Outcome::allowed)
      admitted.push_back({record.sent_ns, record.replied_ns});
  }
  CHECK(read_undelayed_excess({admitted}, unloaded, 10) == 3);
  // A plain queue (delay=0): the second already waits, nothing excess passed at once.
  std::vector<AnsweredRequest> plain;
  for (const RequestRecord& record : two_stage_run(10, 8, 0, 50, 40).records) {
    if (record.outcome == Outcome::allowed)
      plain.push_back({record.sent_ns, record.replied_ns});
  }
  CHECK(read_undelayed_excess({plain}, unloaded, 10) == 0);
  // Nobody waited: no sign of a queue.
  CHECK(!read_undelayed_excess({std::vector<AnsweredRequest>(4, {0, k_lat_ms})}, unloaded, 10));
  CHECK(!read_undelayed_excess({burst}, unloaded, 0));
}

TEST_CASE("latency fit: a two-stage queue judged as a window fits queue:R,B,nodelay=K") {
  // nginx limit_req rate=10r/s burst=8 delay=3 at 20 a second for 2 s, judged as 10 per 1 s.
  const AuditParams audit = window_audit(10, 1000);
  const CheckParams params = window_params(10, 1000, 40);
  JudgedRun judged = judged_run(two_stage_run(10, 8, 3, 50, 40), audit, params);
  REQUIRE(std::any_of(judged.checks.begin(), judged.checks.end(), [](const auto& check) {
    return check.id == "limit" && check.status == Status::fail;
  }));
  const auto fit = fit_contract(judged.recorded, judged.stats, judged.checks, params, audit);
  REQUIRE(fit);
  CHECK(fit->contract == "queue");
  CHECK(fit->flags == "--contract queue:10/s,8,nodelay=3");
  CHECK(fit->nodelay == 3);
  CHECK(fit->queue == 8);
  CHECK(clears(*fit, "limit"));

  // nginx without delay= (a plain queue) judged as 5 per 1 s: its 9 admissions in flight
  // together while they wait are no race's overshoot, and it fits a plain queue.
  const AuditParams five = window_audit(5, 1000);
  const CheckParams five_params = window_params(5, 1000, 40);
  JudgedRun plain = judged_run(two_stage_run(10, 8, 0, 50, 40), five, five_params);
  const auto plain_fit = fit_contract(plain.recorded, plain.stats, plain.checks, five_params, five);
  REQUIRE(plain_fit);
  CHECK(plain_fit->flags == "--contract queue --refill 10/s --queue 8");
  CHECK(!plain_fit->nodelay);
  // The two-stage one judged so: 1 + 3 at once is within 5, so its undelayed part is tried.
  JudgedRun two_stage = judged_run(two_stage_run(10, 8, 3, 50, 40), five, five_params);
  const auto two_stage_fit =
      fit_contract(two_stage.recorded, two_stage.stats, two_stage.checks, five_params, five);
  REQUIRE(two_stage_fit);
  CHECK(two_stage_fit->flags == "--contract queue:10/s,8,nodelay=3");
}

TEST_CASE("latency fit: express-slow-down's replies read late on a loaded machine still fit") {
  // Two runs of 14 sent 50 ms apart to express-slow-down (past 3 in 3 s, 100 ms a request up
  // to 1 s) beside two busy loops, as recorded (send, reply in microseconds): some replies were
  // read up to 66 ms late, beyond what probe's reading allows.
  const auto run_of = [](const std::vector<std::pair<int64_t, int64_t>>& instants_us) {
    std::vector<AnsweredRequest> requests;
    for (const auto& [sent, replied] : instants_us)
      requests.push_back({sent * 1000, replied * 1000});
    return requests;
  };
  const std::vector<AnsweredRequest> first_read_late = run_of({{4, 539},
                                                               {50022, 50499},
                                                               {103090, 110215},
                                                               {150009, 311690},
                                                               {200009, 400606},
                                                               {250011, 615986},
                                                               {300008, 712378},
                                                               {350012, 850980},
                                                               {400008, 1000907},
                                                               {450013, 1191609},
                                                               {543062, 1381177},
                                                               {553329, 1479799},
                                                               {600014, 1601519},
                                                               {650064, 1651054}});
  const std::vector<AnsweredRequest> cap_read_late = run_of({{5, 601},
                                                             {50028, 50687},
                                                             {100016, 100614},
                                                             {150014, 250595},
                                                             {200009, 400544},
                                                             {250012, 550544},
                                                             {300008, 700771},
                                                             {350012, 850611},
                                                             {400009, 1001514},
                                                             {450012, 1150263},
                                                             {500008, 1305336},
                                                             {550010, 1450135},
                                                             {600009, 1655932},
                                                             {650012, 1656397}});
  const AuditParams audit = window_audit(3, 3000);
  const CheckParams params = window_params(3, 3000, 14);
  for (const auto* requests : {&first_read_late, &cap_read_late}) {
    JudgedRun judged = judged_run(slowed_run(*requests), audit, params);
    const auto fit = fit_contract(judged.recorded, judged.stats, judged.checks, params, audit);
    REQUIRE(fit);
    CHECK(fit->flags == "--contract slow-down:first-hit:3/3s,100ms,1s");
  }
}

TEST_CASE("latency fit: waits that climb with the admissions ahead are a queue's, not a cap's") {
  // nginx's queue: the first of each key at once, then each later one longer, up to 800 ms.
  std::vector<std::vector<AnsweredRequest>> queued(2);
  for (const RequestRecord& record :
       nginx_queue_run(0, [](uint32_t, int64_t, bool) { return 0; }).records) {
    if (record.outcome == Outcome::allowed)
      queued[record.identity].push_back({record.sent_ns, record.replied_ns});
  }
  CHECK(waits_climb(queued, k_lat_ms / 10));
  // Its first admissions read 60 ms late on a loaded machine: still far below the others.
  for (std::vector<AnsweredRequest>& admitted : queued)
    admitted.front().replied_ns += 60 * k_lat_ms;
  CHECK(waits_climb(queued, k_lat_ms / 10));

  // A cap of 3 in front of a backend holding each request 400 ms (+-30 ms), one request every
  // 50 ms: every admission waits about the backend's latency, however many are ahead of it.
  std::vector<AnsweredRequest> capped;
  std::vector<int64_t> releases;
  for (int64_t at = 0, k = 0; at < 3000; at += 50, ++k) {
    std::erase_if(releases, [&](int64_t release) { return release <= at; });
    if (releases.size() < 3) {
      releases.push_back(at + 400 + (k % 3 - 1) * 30);
      capped.push_back({at * k_lat_ms, releases.back() * k_lat_ms + k_lat_ms / 10});
    }
  }
  CHECK(!waits_climb({capped}, k_lat_ms));
  // Nothing ahead of two admissions: nothing to tell by.
  CHECK(!waits_climb({{{0, 800 * k_lat_ms}, {k_lat_ms, 900 * k_lat_ms}}}, k_lat_ms));
}

TEST_CASE("latency fit: nginx's queues read on a loaded machine keep their depth, not a cap") {
  // nginx limit_req burst=8 (no delay=) judged as 5 per 1 s. A loaded machine read each key's
  // first reply 40 ms late (its admission answered at once): the floor a cap's audit measures
  // is then 36 ms, under which that admission alone is surely in progress, and concurrency:1
  // explains the run. Its waits climb 50 ms a place behind it: a queue.
  AuditParams five = window_audit(5, 1000);
  five.identities = 2;
  const CheckParams five_params = window_params(5, 1000, 80);
  const ReadLate first_late = [](uint32_t, int64_t k, bool) -> int64_t { return k == 0 ? 40 : 0; };
  JudgedRun plain = judged_run(nginx_queue_run(0, first_late), five, five_params);
  const auto plain_fit = fit_contract(plain.recorded, plain.stats, plain.checks, five_params, five);
  REQUIRE(plain_fit);
  CHECK(plain_fit->flags == "--contract queue --refill 10/s --queue 8");

  // The denials read 20 to 40 ms late (the median 30 ms), the admissions on time, as when the
  // denials come back while a loaded machine is busy sending: beyond a denial's latency, the
  // second admission (50 ms) read as answered at once and the longest wait (800 ms) as 7.7
  // places of 100 ms, read as queue:10/s,8,nodelay=1 (and delay=3's as
  // queue:10/s,8,nodelay=4): the fastest admission, answered at once, is the baseline then.
  const ReadLate denials_late = [](uint32_t, int64_t k, bool allowed) -> int64_t {
    return allowed ? 0 : 20 + (k * 7) % 21;
  };
  JudgedRun short_read = judged_run(nginx_queue_run(0, denials_late), five, five_params);
  const auto short_fit =
      fit_contract(short_read.recorded, short_read.stats, short_read.checks, five_params, five);
  REQUIRE(short_fit);
  CHECK(short_fit->flags == "--contract queue --refill 10/s --queue 8");

  // delay=3 judged as 10 per 1 s, read so.
  AuditParams ten = window_audit(10, 1000);
  ten.identities = 2;
  const CheckParams ten_params = window_params(10, 1000, 80);
  JudgedRun two_stage = judged_run(nginx_queue_run(3, denials_late), ten, ten_params);
  const auto two_stage_fit =
      fit_contract(two_stage.recorded, two_stage.stats, two_stage.checks, ten_params, ten);
  REQUIRE(two_stage_fit);
  CHECK(two_stage_fit->flags == "--contract queue:10/s,8,nodelay=3");

  // nginx reads each request 5 ms after its send, and from the 17th of a key on, every other
  // one a ms earlier (its cached clock not yet advanced): that one finds the queue full by 10
  // thousandths and is denied, and each key's queue is never more than 7.5 places full (as a
  // loaded run recorded, its waits 755 ms). Read short by the old rounding (7.3 places), a
  // queue of 7 replays clean on this run and fails one that fills the last place; to the
  // nearest place, 8, and delay=3's 4.55 places beyond its 3 undelayed, 5 (not 4: 7 in all).
  const PerRequest cached_clock = [](uint32_t, int64_t k) -> int64_t {
    return k >= 16 && k % 2 == 0 ? 4 : 5;
  };
  const ReadLate on_time = [](uint32_t, int64_t, bool) -> int64_t { return 0; };
  JudgedRun locked = judged_run(nginx_queue_run(0, on_time, cached_clock), five, five_params);
  const auto locked_fit =
      fit_contract(locked.recorded, locked.stats, locked.checks, five_params, five);
  REQUIRE(locked_fit);
  CHECK(locked_fit->flags == "--contract queue --refill 10/s --queue 8");
  JudgedRun locked_two_stage =
      judged_run(nginx_queue_run(3, on_time, cached_clock), ten, ten_params);
  const auto locked_two_stage_fit = fit_contract(locked_two_stage.recorded, locked_two_stage.stats,
                                                 locked_two_stage.checks, ten_params, ten);
  REQUIRE(locked_two_stage_fit);
  CHECK(locked_two_stage_fit->flags == "--contract queue:10/s,8,nodelay=3");
}
