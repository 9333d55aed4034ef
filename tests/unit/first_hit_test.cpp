#include <doctest/doctest.h>

#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/first_hit.hpp"
#include "checks/lockout.hpp"
#include "checks/retry_accuracy.hpp"

using rlcheck::checks::AdmissionRule;
using rlcheck::checks::find_admission_peak;
using rlcheck::checks::find_lockouts;
using rlcheck::checks::FirstHitWindows;
using rlcheck::checks::IdentityRecords;
using rlcheck::checks::measure_retry_accuracy;
using rlcheck::checks::measure_utilisation;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

AdmissionRule first_hit(int64_t limit, int64_t window_ms) {
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::first_hit;
  rule.limit = limit;
  rule.window_ns = window_ms * k_ms;
  rule.clock_ns = k_ms;
  return rule;
}

struct Limiter {
  int64_t admits = 10;            // per window: the limit, or more for a broken one
  int64_t window_ms = 1000;       //
  bool expires_at_reply = false;  // INCR + EXPIRE: the window ends a window after the reply
  bool never_again = false;       // locks the client out after its first window
  int64_t hint_ms = -1;           // >= 0: every denial tells this instead of the window's end
};

// One request every `every_ms` from 0 to `until_ms`, each answered after `latency_ms`, decided
// by a first-hit limiter halfway through.
std::vector<RequestRecord> drive(const Limiter& limiter, int64_t every_ms, int64_t until_ms,
                                 int64_t latency_ms = 2) {
  std::vector<RequestRecord> records;
  bool open = false;
  int64_t end_ns = 0, count = 0, windows = 0;
  for (int64_t t = 0, seq = 0; t < until_ms; t += every_ms, ++seq) {
    RequestRecord r;
    r.seq = static_cast<uint64_t>(seq);
    r.sent_ns = t * k_ms;
    r.replied_ns = r.sent_ns + latency_ms * k_ms;
    const int64_t decided_ns = r.sent_ns + latency_ms * k_ms / 2;
    if ((!open || decided_ns >= end_ns) && !(limiter.never_again && windows > 0)) {
      open = true;
      ++windows;
      end_ns = (limiter.expires_at_reply ? r.replied_ns : decided_ns) + limiter.window_ms * k_ms;
      count = 0;
    }
    if (open && decided_ns < end_ns && count < limiter.admits) {
      ++count;
      r.outcome = Outcome::allowed;
    } else {
      r.outcome = Outcome::denied;
      r.hint_expected = true;
      r.retry_ms = limiter.hint_ms >= 0 ? limiter.hint_ms
                                        : std::max<int64_t>(0, (end_ns - decided_ns) / k_ms);
    }
    records.push_back(r);
  }
  return records;
}

}  // namespace

TEST_CASE("a correct first-hit limiter passes every first-hit audit") {
  for (const bool at_reply : {false, true}) {
    CAPTURE(at_reply);
    // 40/s for 3.5 s against 10 per 1 s: windows open at 0, 1000, 2000, 3000 ms (or just after).
    const auto records = drive({10, 1000, at_reply}, 25, 3500);
    const AdmissionRule rule = first_hit(10, 1000);
    const IdentityRecords identities{records};
    const auto peak = find_admission_peak(identities[0], rule);
    CHECK_FALSE(peak.exceeded());
    CHECK(peak.count == 10);  // the first window's admissions are surely in it
    CHECK(find_lockouts(identities, rule, 0, 0).count == 0);
    const auto accuracy = measure_retry_accuracy(identities, rule, 0, {1000, 0});
    CHECK(accuracy.errors.size() > 0);
    CHECK(accuracy.early == 0);
    CHECK(accuracy.late == 0);
    const auto share = measure_utilisation(identities, rule, 0);
    CHECK(share.ratio() >= 0.9);
  }
}

TEST_CASE("first-hit windows are placed where the limiter opened them, within a request") {
  // Windows open at 0, 1000 (or 1025, when the expiry follows the reply), 2000, 3000 ms.
  const auto records = drive({10, 1000, true}, 25, 3500);
  const FirstHitWindows windows(IdentityRecords{records}[0], first_hit(10, 1000));
  REQUIRE(windows.windows().size() == 4);
  for (size_t k = 1; k < 4; ++k) {
    CAPTURE(k);
    const auto& window = windows.windows()[k];
    CHECK(window.open_lo <= window.open_hi);
    CHECK(window.open_hi - window.open_lo <= 60 * k_ms);
    CHECK(window.end_hi - window.end_lo <= 70 * k_ms);
  }
}

TEST_CASE("a first-hit limiter that admits more than its limit per window fails the peak") {
  const auto records = drive({12, 1000}, 25, 3500);
  const auto peak = find_admission_peak(IdentityRecords{records}[0], first_hit(10, 1000));
  CHECK(peak.exceeded());
  CHECK(peak.count == 12);
}

TEST_CASE(
    "a race's burst fails the first window; with state from before the run it proves "
    "nothing") {
  // 16 admitted at once, each answered after 2 ms: all surely in the first window.
  std::vector<RequestRecord> records;
  for (uint64_t seq = 0; seq < 16; ++seq) {
    RequestRecord r;
    r.seq = seq;
    r.sent_ns = 0;
    r.replied_ns = static_cast<int64_t>(2 + seq) * k_ms / 10;
    r.outcome = Outcome::allowed;
    records.push_back(r);
  }
  AdmissionRule rule = first_hit(10, 1000);
  CHECK(find_admission_peak(IdentityRecords{records}[0], rule).count == 16);
  rule.fresh_state = false;  // a window opened before the run may end anywhere among them
  CHECK_FALSE(find_admission_peak(IdentityRecords{records}[0], rule).exceeded());
}

TEST_CASE("a first-hit limiter that never opens a second window locks its client out") {
  const auto records = drive({10, 1000, false, true}, 25, 3000);
  const auto found = find_lockouts(IdentityRecords{records}, first_hit(10, 1000), 0, 0);
  CHECK(found.count > 0);
  REQUIRE(found.worst);
  CHECK(found.worst->used == 0);
  // Not before the first window can have ended (its opening's reply, plus the clock).
  CHECK(found.worst->sent_ns >= 1000 * k_ms);
}

TEST_CASE("first-hit hints that name the window rather than its end are late") {
  const auto records = drive({10, 1000, false, false, 1000}, 25, 3500);
  const auto accuracy =
      measure_retry_accuracy(IdentityRecords{records}, first_hit(10, 1000), 0, {1000, 0});
  CHECK(accuracy.late > 0);
  CHECK(accuracy.early == 0);
}

TEST_CASE("with state from before the run, more than twice the limit within a window still fails") {
  // Whatever the windows' phase, a span shorter than a window meets at most two of them.
  std::vector<RequestRecord> records;
  for (uint64_t seq = 0; seq < 25; ++seq) {
    RequestRecord r;
    r.seq = seq;
    r.sent_ns = static_cast<int64_t>(seq) * 10 * k_ms;
    r.replied_ns = r.sent_ns + k_ms;
    r.outcome = Outcome::allowed;
    records.push_back(r);
  }
  AdmissionRule rule = first_hit(10, 1000);
  rule.fresh_state = false;
  const auto peak = find_admission_peak(IdentityRecords{records}[0], rule);
  CHECK(peak.exceeded());
  CHECK(peak.count == 25);
  CHECK(peak.allowance == 20);
  records.resize(20);
  CHECK_FALSE(find_admission_peak(IdentityRecords{records}[0], rule).exceeded());
}

TEST_CASE("a lost reply may have opened a window: no failure rests on its absence") {
  // The limiter admitted a request whose reply was lost (a timeout) at 0 ms: its window is
  // [0, 1000). Seen: 9 admissions from 500 ms, denials, then 10 from 1000 ms in the next
  // window. Without the lost request the first seen admission seems to open a window to
  // 1500 ms holding 19.
  std::vector<RequestRecord> records;
  uint64_t seq = 0;
  const auto add = [&](int64_t at_ms, Outcome outcome) {
    RequestRecord r;
    r.seq = seq++;
    r.sent_ns = at_ms * k_ms;
    r.replied_ns = r.sent_ns + k_ms;
    r.outcome = outcome;
    records.push_back(r);
  };
  for (int64_t t = 500; t < 590; t += 10)
    add(t, Outcome::allowed);
  for (int64_t t = 600; t < 1000; t += 10)
    add(t, Outcome::denied);
  for (int64_t t = 1000; t < 1100; t += 10)
    add(t, Outcome::allowed);
  const AdmissionRule rule = first_hit(10, 1000);
  CHECK(find_admission_peak(IdentityRecords{records}[0], rule).count == 19);

  RequestRecord lost;
  lost.seq = seq++;
  lost.sent_ns = 0;
  lost.replied_ns = 200 * k_ms;
  lost.outcome = Outcome::error;
  lost.error = rlcheck::engine::ErrorKind::timeout;
  records.insert(records.begin(), lost);
  CHECK_FALSE(find_admission_peak(IdentityRecords{records}[0], rule).exceeded());
  CHECK(find_lockouts(IdentityRecords{records}, rule, 0, 0).count == 0);
}
