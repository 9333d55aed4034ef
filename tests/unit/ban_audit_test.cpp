#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "checks/ban_audit.hpp"

using rlcheck::checks::AccuracyTolerance;
using rlcheck::checks::AdmissionRule;
using rlcheck::checks::audit_bans;
using rlcheck::checks::BanAudit;
using rlcheck::checks::BanRule;
using rlcheck::checks::IdentityRecords;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

// A limiter that bans for `ban_ms` (renewed by requests during it with `renews`) once a window
// holds `limit` requests: on fixed windows of the clock it admits the one that fills it and
// bans from it (rack-attack's Allow2Ban); on a sliding window it denies the first request over
// the limit and bans from it (a fail2ban-style block). Hints name the ban's end.
struct BanningLimiter {
  AdmissionRule::Kind kind = AdmissionRule::Kind::fixed;
  int64_t limit = 3;
  int64_t window_ms = 1000;
  int64_t ban_ms = 2000;
  bool renews = false;
  int64_t hint_ms_override = -1;  // >= 0: every denial hints this instead

  // Requests every `every_ms` from 50 ms (clear of window 0's start, which a request at 0 may
  // straddle) to `until_ms`.
  std::vector<RequestRecord> serve(int64_t every_ms, int64_t until_ms) const {
    std::vector<RequestRecord> records;
    int64_t banned_until = -1;
    std::map<int64_t, int64_t> per_window;
    std::vector<int64_t> seen;  // sliding: the requests counted
    for (int64_t t = 50, seq = 0; t < until_ms; t += every_ms, ++seq) {
      RequestRecord r;
      r.seq = static_cast<uint64_t>(seq);
      r.sent_ns = t * k_ms;
      r.replied_ns = r.sent_ns + k_ms;
      r.hint_expected = true;
      bool admitted = false;
      if (t < banned_until) {
        if (renews)
          banned_until = t + ban_ms;
      } else if (kind == AdmissionRule::Kind::fixed) {
        admitted = true;
        if (++per_window[t / window_ms] >= limit)
          banned_until = t + ban_ms;
      } else {
        std::erase_if(seen, [&](int64_t at) { return at <= t - window_ms; });
        seen.push_back(t);
        admitted = static_cast<int64_t>(seen.size()) <= limit;
        if (!admitted)
          banned_until = t + ban_ms;
      }
      r.outcome = admitted ? Outcome::allowed : Outcome::denied;
      if (!admitted)
        r.retry_ms = hint_ms_override >= 0 ? hint_ms_override : banned_until - t;
      records.push_back(r);
    }
    return records;
  }
};

AdmissionRule inner_rule(AdmissionRule::Kind kind, int64_t limit, int64_t window_ms) {
  AdmissionRule rule;
  rule.kind = kind;
  rule.limit = limit;
  rule.window_ns = window_ms * k_ms;
  rule.clock_ns = k_ms;
  return rule;
}

BanAudit audit(const std::vector<RequestRecord>& records, AdmissionRule::Kind kind, int64_t ban_ms,
               bool renews = false, bool fresh_state = true) {
  AccuracyTolerance tolerance;
  tolerance.window_ms = 2000;
  return audit_bans(IdentityRecords{records}, inner_rule(kind, 3, 1000),
                    BanRule{ban_ms * k_ms, renews}, 0, fresh_state, tolerance);
}

constexpr auto k_fixed = AdmissionRule::Kind::fixed;
constexpr auto k_sliding = AdmissionRule::Kind::sliding;

}  // namespace

TEST_CASE("a ban as long as stated passes, on fixed windows and on a sliding one") {
  for (const auto kind : {k_fixed, k_sliding}) {
    BanningLimiter limiter;
    limiter.kind = kind;
    const BanAudit found = audit(limiter.serve(100, 9000), kind, 2000);
    CHECK(found.bans >= 2);
    CHECK(found.breaches == 0);
    CHECK(found.lockouts.judged > 0);
    CHECK(found.lockouts.count == 0);
    CHECK(found.retry.any());
    CHECK(found.retry.early == 0);
    CHECK(found.retry.late == 0);
    CHECK(found.retry.unexplained == 0);
  }
}

TEST_CASE("a ban longer than stated locks the client out past its end") {
  BanningLimiter limiter;
  limiter.ban_ms = 4000;
  const BanAudit found = audit(limiter.serve(100, 9000), k_fixed, 2000);
  CHECK(found.breaches == 0);
  REQUIRE(found.lockouts.worst);
  CHECK(found.lockouts.count > 0);
  // The first ban began at 250 ms (the third request of window 0), or at 350 ms (the first
  // over the limit), and may run to 2351 ms plus the tolerance: the denials from 2450 ms on
  // were lock-outs.
  CHECK(found.lockouts.worst->sent_ns >= 2450 * k_ms);
  // Its hints, 4 s long, are later than any 2 s ban can end.
  CHECK(found.retry.late > 0);
}

TEST_CASE("a ban shorter than stated admits during it") {
  BanningLimiter limiter;
  limiter.ban_ms = 1000;
  const BanAudit found = audit(limiter.serve(100, 9000), k_fixed, 2000);
  CHECK(found.breaches > 0);
  REQUIRE(found.first);
  // Banned from the third admission (250 ms) for at least 2 s less the tolerance; the limiter
  // admitted again at 1250 ms.
  CHECK(found.first->sent_ns == 1250 * k_ms);
  CHECK(found.first->ban_end_ns > 2240 * k_ms);
}

TEST_CASE("a renewed ban holds a client that keeps asking; stated without renewal it fails") {
  BanningLimiter limiter;
  limiter.renews = true;
  const auto records = limiter.serve(250, 9000);
  const BanAudit renewed = audit(records, k_fixed, 2000, true);
  CHECK(renewed.bans == 1);
  CHECK(renewed.breaches == 0);
  CHECK(renewed.lockouts.count == 0);
  CHECK(renewed.retry.late == 0);
  CHECK(renewed.retry.early == 0);
  const BanAudit plain = audit(records, k_fixed, 2000, false);
  CHECK(plain.lockouts.count > 0);
}

TEST_CASE("a ban that is not renewed admits during what a renewed one holds") {
  BanningLimiter limiter;  // bans for 2 s from the trigger, whatever comes during it
  const BanAudit found = audit(limiter.serve(250, 9000), k_fixed, 2000, true);
  // Banned at 550 ms (the third of window 0), renewed by every denial from 1050 ms on: the
  // admission at 2550 ms came during it.
  REQUIRE(found.first);
  CHECK(found.first->sent_ns == 2550 * k_ms);
}

TEST_CASE("hints shorter than the ban's end are early") {
  BanningLimiter limiter;
  limiter.hint_ms_override = 0;
  const BanAudit found = audit(limiter.serve(100, 9000), k_fixed, 2000);
  CHECK(found.retry.early > 0);
}

TEST_CASE("a denial before any ban could begin is a lock-out; one after a full window is not") {
  std::vector<RequestRecord> records;
  for (int64_t i = 0; i < 4; ++i) {
    RequestRecord r;
    r.seq = static_cast<uint64_t>(i);
    r.sent_ns = i * 100 * k_ms;
    r.replied_ns = r.sent_ns + k_ms;
    r.outcome = i == 1 ? Outcome::denied : Outcome::allowed;
    records.push_back(r);
  }
  const BanAudit found = audit(records, k_sliding, 2000);
  CHECK(found.lockouts.judged == 1);
  CHECK(found.lockouts.count == 1);
  // The same denial at the fourth request: three came before it, it may start the ban.
  records[1].outcome = Outcome::allowed;
  records[3].outcome = Outcome::denied;
  CHECK(audit(records, k_sliding, 2000).lockouts.count == 0);
}

TEST_CASE("a fail2ban-style ban longer than stated locks out on a sliding window too") {
  BanningLimiter limiter;
  limiter.kind = k_sliding;
  limiter.ban_ms = 4000;
  const BanAudit found = audit(limiter.serve(100, 9000), k_sliding, 2000);
  CHECK(found.breaches == 0);
  CHECK(found.lockouts.count > 0);
}

TEST_CASE("state from before the run may hold a ban: early denials are not judged") {
  // Every request denied for the first 2.5 s, then admitted as a fresh client would be.
  BanningLimiter limiter;
  auto records = limiter.serve(250, 6000);
  for (RequestRecord& r : records) {
    if (r.sent_ns < 2500 * k_ms) {
      r.outcome = Outcome::denied;
      r.retry_ms.reset();
    }
  }
  // On fresh state, a denial before any ban could begin is a lock-out...
  CHECK(audit(records, k_fixed, 2000).lockouts.count > 0);
  // ...but a ban begun before the run may last 2 s into it, and any request of the run's
  // first window (whose count from before the run is unknown) may have begun another.
  const BanAudit unknown = audit(records, k_fixed, 2000, false, false);
  CHECK(unknown.lockouts.count == 0);
}

TEST_CASE(
    "each proved ban is kept for the timeline: from its trigger's reply to its earliest end") {
  BanningLimiter limiter;
  const BanAudit found = audit(limiter.serve(100, 9000), k_fixed, 2000);
  REQUIRE(found.bans >= 2);
  CHECK(found.spans.size() == static_cast<size_t>(found.bans));
  // Window 0 admitted 50, 150 and 250 ms; the denial sent at 350 ms and answered at 351 ms
  // proves the ban begun by then, from the third admission's send on.
  const auto tolerance =
      rlcheck::checks::ban_tolerance_ns(inner_rule(k_fixed, 3, 1000), BanRule{2000 * k_ms, false});
  CHECK(found.spans.front().identity == 0);
  CHECK(found.spans.front().from_ns == 351 * k_ms);
  CHECK(found.spans.front().to_ns == 2250 * k_ms - tolerance);
  for (size_t i = 1; i < found.spans.size(); ++i)
    CHECK(found.spans[i].from_ns >= found.spans[i - 1].to_ns);
}
