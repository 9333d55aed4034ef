#include "checks/sliding_counter.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/lockout.hpp"
#include "checks/retry_accuracy.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::audit_contract;
using rlcheck::checks::contract_kind;
using rlcheck::checks::find_admission_peak;
using rlcheck::checks::find_lockouts;
using rlcheck::checks::IdentityRecords;
using rlcheck::checks::measure_retry_accuracy;
using rlcheck::checks::measure_utilisation;
using rlcheck::checks::SlidingCounter;
using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

AdmissionRule counter(int64_t limit, int64_t window_ms) {
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::sliding_counter;
  rule.limit = limit;
  rule.window_ns = window_ms * k_ms;
  rule.clock_ns = k_ms;
  return rule;
}

struct Limiter {
  int64_t limit = 10;
  int64_t window_ms = 1000;
  int64_t origin_ms = 0;      // where its windows turn: origin + k W
  int64_t start_ms = 0;       // the first request (not before the origin)
  bool forgets_prev = false;  // a fixed window in disguise
  bool never_again = false;   // denies everything after its first window
};

// One request every `every_ms` from the limiter's origin to `until_ms`, answered after 2 ms,
// decided halfway by a sliding-window counter; each denial tells the exact wait until the
// estimate drops below L.
std::vector<RequestRecord> drive(const Limiter& limiter, int64_t every_ms, int64_t until_ms) {
  std::vector<RequestRecord> records;
  const double window = static_cast<double>(limiter.window_ms * k_ms);
  int64_t current = INT64_MIN, curr = 0, prev = 0;
  for (int64_t t = std::max(limiter.origin_ms, limiter.start_ms), seq = 0; t < until_ms;
       t += every_ms, ++seq) {
    RequestRecord r;
    r.seq = static_cast<uint64_t>(seq);
    r.sent_ns = t * k_ms;
    r.replied_ns = r.sent_ns + 2 * k_ms;
    const int64_t decided = r.sent_ns + k_ms;
    const int64_t since = decided - limiter.origin_ms * k_ms;
    const auto k = static_cast<int64_t>(std::floor(static_cast<double>(since) / window));
    if (k != current) {
      prev = k == current + 1 ? curr : 0;
      curr = 0;
      current = k;
    }
    const double start = static_cast<double>(k) * window;
    const double f = (static_cast<double>(since) - start) / window;
    const double weight = limiter.forgets_prev ? 0.0 : 1.0 - f;
    const bool locked = limiter.never_again && since >= limiter.window_ms * k_ms;
    if (!locked && static_cast<double>(prev) * weight + static_cast<double>(curr) <
                       static_cast<double>(limiter.limit)) {
      ++curr;
      r.outcome = Outcome::allowed;
    } else {
      const auto limit = static_cast<double>(limiter.limit);
      const auto c = static_cast<double>(curr);
      // A limiter that locks out (never_again) may deny with no previous window to wait out:
      // it then names the next window.
      const double drop = c >= limit ? start + window + window * (1.0 - limit / c)
                          : prev > 0
                              ? start + window * (1.0 - (limit - c) / static_cast<double>(prev))
                              : start + window;
      r.outcome = Outcome::denied;
      r.hint_expected = true;
      r.retry_ms = static_cast<int64_t>(std::ceil((drop - static_cast<double>(since)) / 1e6));
    }
    records.push_back(r);
  }
  return records;
}

RequestRecord at(uint64_t seq, int64_t sent_ms, int64_t replied_ms, Outcome outcome) {
  RequestRecord r;
  r.seq = seq;
  r.sent_ns = sent_ms * k_ms;
  r.replied_ns = replied_ms * k_ms;
  r.outcome = outcome;
  if (outcome == Outcome::denied)
    r.hint_expected = true;
  return r;
}

RequestRecord lost(uint64_t seq, int64_t sent_ms) {
  RequestRecord r = at(seq, sent_ms, sent_ms + 500, Outcome::error);
  r.error = ErrorKind::timeout;
  return r;
}

}  // namespace

TEST_CASE("--contract sliding-counter names the sliding-window counter rule") {
  CHECK(contract_kind("sliding-counter") == AdmissionRule::Kind::sliding_counter);
  CHECK(contract_kind("sliding-counter", "first-hit") == AdmissionRule::Kind::sliding_counter);
}

TEST_CASE("a correct sliding-window counter passes every audit, though a true window holds more") {
  // 40/s for 4.5 s against 10 per 1 s.
  const auto records = drive({}, 25, 4500);
  const AdmissionRule rule = counter(10, 1000);
  const IdentityRecords identities{records};
  const auto audit = audit_contract(identities, rule);
  CHECK_FALSE(audit.worst.exceeded());
  CHECK(find_lockouts(identities, rule, 0, 0).count == 0);
  const auto accuracy = measure_retry_accuracy(identities, rule, 0, {1000, 0});
  CHECK(accuracy.errors.size() > 0);
  CHECK(accuracy.early == 0);
  CHECK(accuracy.late == 0);
  CHECK(measure_utilisation(identities, rule, 0).ratio() >= 0.99);
}

TEST_CASE("a counter lets up to 2 L through in one true sliding window, within its contract") {
  // 200/s from 0.95 s: ten at the end of window 0, the rest of window 1 as its weight falls.
  const auto records = drive({.start_ms = 950}, 5, 2000);
  const AdmissionRule rule = counter(10, 1000);
  const auto audit = audit_contract(IdentityRecords{records}, rule);
  CHECK_FALSE(audit.worst.exceeded());
  CHECK(audit.sliding_window.count > 10);
  // Twice the limit, at most: the previous window's ten all came in its last W / L.
  CHECK(audit.sliding_window.count <= 20);
}

TEST_CASE("a counter that forgets the previous window fails the contract") {
  const auto records = drive({.forgets_prev = true}, 25, 4500);
  const auto peak = find_admission_peak(IdentityRecords{records}[0], counter(10, 1000));
  CHECK(peak.exceeded());
}

TEST_CASE("a counter that never admits again locks its client out") {
  const auto records = drive({.never_again = true}, 25, 3000);
  const auto found = find_lockouts(IdentityRecords{records}, counter(10, 1000), 0, 0);
  CHECK(found.count > 0);
  REQUIRE(found.worst);
  CHECK(found.worst->used < 10);
}

TEST_CASE("an admission is held against the counter only when the estimate was surely full") {
  const AdmissionRule rule = counter(2, 1000);
  // Two in window 0, one in window 1, then one at 1.2 s: 2 x 0.8 + 1 >= 2 wherever it fell.
  std::vector<RequestRecord> records{
      at(0, 100, 102, Outcome::allowed), at(1, 200, 202, Outcome::allowed),
      at(2, 1100, 1102, Outcome::allowed), at(3, 1200, 1210, Outcome::allowed)};
  auto peak = find_admission_peak(IdentityRecords{records}[0], rule);
  CHECK(peak.exceeded());
  CHECK(peak.count == 4);
  CHECK(peak.allowance == 3);  // ceil(2 + 2 x 0.211)

  SUBCASE("decided as late as its reply, the previous window weighed almost nothing") {
    records[3].replied_ns = 1990 * k_ms;
    CHECK_FALSE(find_admission_peak(IdentityRecords{records}[0], rule).exceeded());
  }
  SUBCASE("the one before it may have come after it") {
    records[2].replied_ns = 1250 * k_ms;
    CHECK_FALSE(find_admission_peak(IdentityRecords{records}[0], rule).exceeded());
  }
  SUBCASE("one on either side of a boundary counts where it favours the limiter") {
    records.pop_back();
    records[2] = at(2, 995, 1005, Outcome::allowed);  // window 0: full; window 1: 2 x 0.994
    CHECK_FALSE(find_admission_peak(IdentityRecords{records}[0], rule).exceeded());
  }
  SUBCASE("a lost reply never counts as an admission against it") {
    records[2] = lost(2, 1100);
    CHECK_FALSE(find_admission_peak(IdentityRecords{records}[0], rule).exceeded());
  }
}

TEST_CASE("a denial is held against the counter only when the estimate surely had room") {
  const AdmissionRule rule = counter(1, 1000);
  // One admission in window 0; at 1.5 s the estimate is at most 1 x 0.5.
  std::vector<RequestRecord> records{at(0, 100, 102, Outcome::allowed),
                                     at(1, 1500, 1502, Outcome::denied)};
  CHECK(find_lockouts(IdentityRecords{records}, rule, 0, 0).count == 1);
  const SlidingCounter counted(IdentityRecords{records}[0], rule);
  CHECK(counted.most_used(records[1]) == doctest::Approx(0.501).epsilon(0.001));

  SUBCASE("a lost reply sent before it may have been admitted just before it") {
    records.insert(records.begin() + 1, lost(1, 1200));
    records[2].seq = 2;
    CHECK(find_lockouts(IdentityRecords{records}, rule, 0, 0).count == 0);
  }
  SUBCASE("a denial that may sit before the boundary met a full window") {
    records[1] = at(1, 990, 1010, Outcome::denied);
    CHECK(find_lockouts(IdentityRecords{records}, rule, 0, 0).count == 0);
  }
  SUBCASE("state from before the run is not known: the first two windows are not judged") {
    CHECK(find_lockouts(IdentityRecords{records}, rule, 0, 2000 * k_ms).count == 0);
  }
}

TEST_CASE("a counter's hint is the wait until the estimate drops below the limit") {
  const AdmissionRule rule = counter(2, 1000);
  std::vector<RequestRecord> records{
      at(0, 100, 102, Outcome::allowed), at(1, 200, 202, Outcome::allowed),
      at(2, 300, 302, Outcome::denied),  // curr full: the next window's start
      at(3, 1100, 1102, Outcome::allowed),
      at(4, 1200, 1202, Outcome::denied)};  // 2 x (1 - f) + 1 < 2 from f = 0.5
  const SlidingCounter counted(IdentityRecords{records}[0], rule);
  const auto full = counted.wait(records[2]);
  REQUIRE(full);
  CHECK(full->low_ns == doctest::Approx(698 * k_ms));
  CHECK(full->high_ns == doctest::Approx(700 * k_ms));
  const auto weighted = counted.wait(records[4]);
  REQUIRE(weighted);
  CHECK(weighted->low_ns == doctest::Approx(298 * k_ms));
  CHECK(weighted->high_ns == doctest::Approx(300 * k_ms));

  records[2].retry_ms = 700;
  records[4].retry_ms = 300;
  auto accuracy = measure_retry_accuracy(IdentityRecords{records}, rule, 0, {1000, 0});
  CHECK(accuracy.early + accuracy.late == 0);
  records[4].retry_ms = 1000;  // the window's end, as a fixed window would say
  accuracy = measure_retry_accuracy(IdentityRecords{records}, rule, 0, {1000, 0});
  CHECK(accuracy.late == 1);
}

TEST_CASE("first-hit counters turn their windows a window after the first admission") {
  const auto records = drive({.origin_ms = 300}, 25, 4500);
  AdmissionRule rule = counter(10, 1000);
  rule.first_hit_anchor = true;
  const IdentityRecords identities{records};
  CHECK_FALSE(find_admission_peak(identities[0], rule).exceeded());
  CHECK(find_lockouts(identities, rule, 0, 0).count == 0);
  const auto accuracy = measure_retry_accuracy(identities, rule, 0, {1000, 0});
  CHECK(accuracy.early + accuracy.late == 0);
  CHECK(measure_utilisation(identities, rule, 0).ratio() >= 0.99);

  SUBCASE("judged on the clock instead, its denials come with room") {
    rule.first_hit_anchor = false;
    CHECK(find_lockouts(identities, rule, 0, 0).count > 0);
  }
  SUBCASE("with state from before the run the phase is unknown: nothing is proved") {
    const auto broken = drive({.origin_ms = 300, .forgets_prev = true}, 25, 4500);
    rule.fresh_state = false;
    CHECK_FALSE(find_admission_peak(IdentityRecords{broken}[0], rule).exceeded());
    rule.fresh_state = true;
    CHECK(find_admission_peak(IdentityRecords{broken}[0], rule).exceeded());
  }
}
