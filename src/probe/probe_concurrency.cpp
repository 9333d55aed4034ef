// The concurrency test: a first chunk sent one at a time met no denial; a batch sent at once on
// an identity of its own, then another once its replies came, then a few one at a time again.
// A cap on requests in progress denies part of each batch and none of the requests one at a
// time; a limiter that counts requests has no room left for the second batch
// (checks/concurrency_probe says what the requests mean).

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "checks/concurrency_probe.hpp"
#include "probe/probe_sequence.hpp"

namespace rlcheck::probe {

using engine::Outcome;

namespace {

int64_t slowest_denial_ns(const std::vector<ProbeRequest>& requests) {
  int64_t slowest = 0;
  for (const ProbeRequest& request : requests) {
    if (request.outcome == Outcome::denied)
      slowest = std::max(slowest, request.latency_ns);
  }
  return slowest;
}

}  // namespace

bool Sequence::infer_concurrency(const std::vector<ProbeRequest>& one_at_a_time) {
  // Requests in flight at once need a real clock and an identity no other phase uses.
  if (target_.virtual_clock() || target_.distinct_identities() <= k_concurrency_identity)
    return false;
  auto& evidence = result_.evidence;
  const auto first = send(k_concurrency_identity, k_concurrency_batch, target_.now_ns(), true);
  const checks::AtOnceBatch first_read = checks::read_at_once(first);
  if (first_read.denied == 0 || first_read.admitted == 0)
    return false;  // the doubling one at a time goes on as it always did
  const auto second = send(k_concurrency_identity, k_concurrency_batch, target_.now_ns(), true);
  const checks::AtOnceBatch second_read = checks::read_at_once(second);
  std::string why_not;
  const std::optional<int64_t> cap = checks::cap_from_batches(first_read, second_read, why_not);
  if (!cap) {
    evidence.push_back(fmt::format(
        "{} sent at once on an identity of their own: {} admitted; again once their replies "
        "came: {} admitted: not a cap on requests in progress ({})",
        k_concurrency_batch, first_read.admitted, second_read.admitted, why_not));
    return false;
  }
  // One more than the cap, one at a time: a cap admits them all (one in progress), a limiter
  // that counted the batches' admissions does not.
  const auto after = send(k_concurrency_identity, *cap + 1, target_.now_ns());
  if (admitted(after) != *cap + 1) {
    evidence.push_back(fmt::format(
        "{} sent at once: {} and {} admitted; then {} of {} one at a time: what was admitted "
        "is counted, not a cap on requests in progress",
        k_concurrency_batch, first_read.admitted, second_read.admitted, admitted(after), *cap + 1));
    return false;
  }
  std::vector<ProbeRequest> all(one_at_a_time);
  for (const auto* part : {&first, &second, &after})
    all.insert(all.end(), part->begin(), part->end());
  const int64_t fastest = checks::fastest_admission_ns(all);
  const int64_t slowest_denial = slowest_denial_ns(all);
  evidence.push_back(
      fmt::format("{} sent one at a time: all admitted, replies in {:.1f} ms at "
                  "least",
                  one_at_a_time.size(), ms(checks::fastest_admission_ns(one_at_a_time))));
  evidence.push_back(fmt::format(
      "{} sent at once on an identity of their own: {} admitted and held, {} denied in {:.1f} "
      "ms at most; again once their replies came: {} admitted, {} denied",
      k_concurrency_batch, first_read.admitted, first_read.denied, ms(slowest_denial),
      second_read.admitted, second_read.denied));
  evidence.push_back(fmt::format(
      "then {} one at a time on the same identity: all admitted: denials depend on how many "
      "requests are in progress, not on how many were sent",
      *cap + 1));
  result_.algorithm = "concurrency";
  result_.limit = *cap;
  result_.hold_ms = ms(fastest);
  result_.confidence = first_read.admitted == second_read.admitted ? "high" : "low";
  if (first_read.admitted != second_read.admitted) {
    result_.notes.push_back(fmt::format(
        "the two batches admitted {} and {}: the cap is read as the most admitted at once",
        first_read.admitted, second_read.admitted));
  }
  result_.notes.push_back(fmt::format(
      "admitted requests took {:.0f} ms at least: a load run measures this floor itself; add "
      "--hold only with a time the endpoint promises to hold every request",
      ms(fastest)));
  result_.notes.push_back(
      "a window shorter than one reply would admit alike: judged as a cap, a load run tells");
  return true;
}

}  // namespace rlcheck::probe
