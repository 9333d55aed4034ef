// A token bucket in steps whose ticks --anchor places: on the limiter's clock (multiples of the
// interval, read within the clock's resolution) or counted from the bucket's creation (its
// first admission's arrival, between that request's send and reply). Fixed records at the
// ticks' edges: a span gets only the ticks some allowed placement puts in it.

#include <doctest/doctest.h>

#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/lockout.hpp"
#include "checks/stepped_bucket.hpp"
#include "command_line_support.hpp"
#include "judging/contract_choice.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::find_admission_peak;
using rlcheck::checks::find_lockouts;
using rlcheck::checks::IdentityRecords;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;

namespace {

constexpr int64_t k_tick_ms_ns = 1'000'000;

// Burst `burst`, 2 tokens at each 1 s tick, a millisecond clock; the run started on a whole
// second of the limiter's clock (its ticks at 0, 1000 ms, ... from the run start).
AdmissionRule anchored(AdmissionRule::Ticks ticks, int64_t burst = 2) {
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::bucket;
  rule.burst = burst;
  rule.tokens_per_ns = 2.0 / (1000.0 * k_tick_ms_ns);
  rule.clock_ns = k_tick_ms_ns;
  rule.step_tokens = 2;
  rule.step_ns = 1000 * k_tick_ms_ns;
  rule.ticks = ticks;
  rule.start_wall_ns = 1'700'000'000'000 * k_tick_ms_ns;
  rule.fresh_state = true;
  return rule;
}

// `count` admissions sent at each `sent_ms`, each answered 1 ms later.
std::vector<RequestRecord> admissions(const std::vector<std::pair<int64_t, int>>& sends_ms) {
  std::vector<RequestRecord> records;
  for (const auto& [sent_ms, count] : sends_ms) {
    for (int k = 0; k < count; ++k) {
      RequestRecord r;
      r.seq = records.size();
      r.sent_ns = sent_ms * k_tick_ms_ns;
      r.replied_ns = r.sent_ns + k_tick_ms_ns;
      r.outcome = Outcome::allowed;
      records.push_back(r);
    }
  }
  return records;
}

bool over(const std::vector<RequestRecord>& records, const AdmissionRule& rule) {
  return find_admission_peak(records, rule).exceeded();
}

constexpr auto k_anywhere = AdmissionRule::Ticks::anywhere;
constexpr auto k_clock = AdmissionRule::Ticks::clock;
constexpr auto k_first_hit = AdmissionRule::Ticks::first_hit;

}  // namespace

TEST_CASE("anchored ticks: on the clock, two bursts between ticks fail; across a tick pass") {
  // 2 at 100 ms and 2 at 110 ms: no tick of the clock between (the bracket allows one).
  const auto between = admissions({{100, 2}, {110, 2}});
  CHECK_FALSE(over(between, anchored(k_anywhere)));
  CHECK(over(between, anchored(k_clock)));
  // 2 at 990 ms and 2 at 1001 ms: the tick at 1000 ms came between.
  CHECK_FALSE(over(admissions({{990, 2}, {1001, 2}}), anchored(k_clock)));
  // A run that started 300 ms past a whole second has its ticks at 700 ms, 1700 ms, ...
  AdmissionRule shifted = anchored(k_clock);
  shifted.start_wall_ns += 300 * k_tick_ms_ns;
  CHECK_FALSE(over(admissions({{690, 2}, {705, 2}}), shifted));
  CHECK(over(admissions({{705, 2}, {720, 2}}), shifted));
}

TEST_CASE("anchored ticks: the clock's resolution gives a tick at the span's edge") {
  // The last replied at 999 ms: the tick at 1000 ms is within the clock's millisecond.
  CHECK_FALSE(over(admissions({{995, 2}, {998, 2}}), anchored(k_clock)));
  // Replied at 998 ms: 2 ms short of the tick, which no reading puts in the span.
  CHECK(over(admissions({{995, 2}, {997, 2}}), anchored(k_clock)));
  // The first sent at 1000 ms: the tick at 1000 ms may have come just after its arrival, on a
  // clock a millisecond off; sent at 1001 ms, it surely came at or before.
  CHECK_FALSE(over(admissions({{1000, 2}, {1010, 2}}), anchored(k_clock)));
  CHECK(over(admissions({{1001, 2}, {1010, 2}}), anchored(k_clock)));
}

TEST_CASE("anchored ticks: a span gets the ticks of the clock in it, not its length's worth") {
  // 2 at 500 ms, 2 at the tick at 1000 ms, 2 more at 1600 ms: one tick in 1.1 s, so 6 are
  // too many, though a smooth rate over 1.1 s (and the bracket) would allow them.
  const auto early = admissions({{500, 2}, {1000, 2}, {1600, 2}});
  CHECK_FALSE(over(early, anchored(k_anywhere)));
  CHECK(over(early, anchored(k_clock)));
  // The next tick at 2000 ms brings 2 more: 6 pass, 7 do not.
  CHECK_FALSE(over(admissions({{500, 2}, {1000, 2}, {2000, 2}}), anchored(k_clock)));
  CHECK(over(admissions({{500, 2}, {1000, 2}, {2000, 3}}), anchored(k_clock)));
}

TEST_CASE("anchored ticks: from the first hit, the first tick comes a whole interval on") {
  // A burst of 6, kept by a store 3 intervals after its last admission: the pauses below stay
  // under the 2 s that leaves, less a second for its rounding. Created between 0 and 1 ms: its
  // first tick between 1000 and 1001 ms.
  const AdmissionRule first_hit = anchored(k_first_hit, 6);
  CHECK(over(admissions({{0, 6}, {990, 2}}), first_hit));
  CHECK_FALSE(over(admissions({{0, 6}, {990, 2}}), anchored(k_anywhere, 6)));
  // Replied at 1000 ms: the tick may have come (created at 0, the clock's millisecond).
  CHECK_FALSE(over(admissions({{0, 6}, {999, 2}}), first_hit));
  CHECK(over(admissions({{0, 6}, {997, 2}}), first_hit));
  // The creation's own instant brings a full bucket, not a tick: 2 right after it fail.
  CHECK(over(admissions({{0, 6}, {2, 2}}), first_hit));
  // A request sent earlier (its reply lost) may have created the bucket: the ticks may come
  // that much sooner.
  auto earlier = admissions({{0, 6}, {990, 2}});
  RequestRecord lost;
  lost.seq = 9;
  lost.sent_ns = -20 * k_tick_ms_ns;
  lost.replied_ns = 5000 * k_tick_ms_ns;
  lost.outcome = Outcome::error;
  earlier.push_back(lost);
  CHECK_FALSE(over(earlier, first_hit));
}

TEST_CASE("anchored ticks: a denial after a tick that surely came had room; one before it not") {
  // The burst of 4 spent at the creation (0 to 1 ms): its first tick between 1000 and 1001 ms.
  const auto denied_at = [](int64_t sent_ms) {
    auto records = admissions({{0, 4}});
    RequestRecord denial;
    denial.seq = records.size();
    denial.sent_ns = sent_ms * k_tick_ms_ns;
    denial.replied_ns = denial.sent_ns + k_tick_ms_ns;
    denial.outcome = Outcome::denied;
    records.push_back(denial);
    return records;
  };
  const auto lock_outs = [](const std::vector<RequestRecord>& records, const AdmissionRule& rule) {
    return find_lockouts(IdentityRecords{records}, rule, 0, 0).count;
  };
  const AdmissionRule first_hit = anchored(k_first_hit, 4);
  CHECK(lock_outs(denied_at(995), first_hit) == 0);
  CHECK(lock_outs(denied_at(1000), first_hit) == 0);
  // Sent at 1002 ms: the tick came by 1001 ms however the creation and the clock read.
  CHECK(lock_outs(denied_at(1002), first_hit) == 1);
  // The bracket cannot tell: a tick may come as late as a whole interval after the spending.
  CHECK(lock_outs(denied_at(1002), anchored(k_anywhere, 4)) == 0);
}

TEST_CASE("anchored ticks: first-hit falls back to anywhere where the phase is not surely known") {
  const auto records = admissions({{0, 4}, {990, 2}});
  // State from before the run: the bucket may predate it.
  AdmissionRule old_state = anchored(k_first_hit, 4);
  old_state.fresh_state = false;
  CHECK_FALSE(rlcheck::checks::tick_phase(records, old_state).has_value());
  CHECK_FALSE(over(records, old_state));
  // A burst of 6 is kept 3 intervals: pauses under 2 s (3 s less a second for the store's
  // rounding) keep the phase; a longer one may have let the store drop the bucket and make it
  // anew.
  const auto kept = admissions({{0, 6}, {990, 2}, {2500, 2}});
  CHECK(rlcheck::checks::tick_phase(kept, anchored(k_first_hit, 6)).has_value());
  const auto paused = admissions({{0, 6}, {990, 2}, {3000, 2}});
  CHECK_FALSE(rlcheck::checks::tick_phase(paused, anchored(k_first_hit, 6)).has_value());
}

TEST_CASE("--anchor places a token bucket's ticks only when it refills in steps") {
  const auto parsed =
      parse_arguments({"http", "http://127.0.0.1:1/", "--contract", "token-bucket", "--burst", "10",
                       "--refill", "5/1s,steps", "--anchor", "first-hit"});
  const auto choice =
      rlcheck::judging::choose_contract(parsed.config, std::nullopt, parsed.config.checks.limit);
  CHECK(choice.audit.rule.ticks == k_first_hit);
  const auto spec = parse_arguments({"http", "http://127.0.0.1:1/", "--contract",
                                     "token-bucket:10,5/1s,steps", "--anchor", "clock"});
  CHECK(rlcheck::judging::choose_contract(spec.config, std::nullopt, spec.config.checks.limit)
            .audit.rule.ticks == k_clock);
  CHECK(mentions(usage_error({"http", "http://127.0.0.1:1/", "--contract", "token-bucket",
                              "--refill", "5/1s", "--anchor", "clock"}),
                 "--anchor"));
  CHECK(mentions(
      usage_error({"http", "http://127.0.0.1:1/", "--contract", "gcra", "--anchor", "first-hit"}),
      "--anchor"));
  CHECK(mentions(usage_error({"redis", "--contract", "token-bucket", "--refill", "5/1s,steps",
                              "--anchor", "clock", "--clock-skew", "0,50ms"}),
                 "--clock-skew"));
}
