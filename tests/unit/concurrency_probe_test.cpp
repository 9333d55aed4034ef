#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "checks/concurrency_probe.hpp"

using namespace rlcheck::checks;
using rlcheck::engine::Outcome;

namespace {

constexpr int64_t k_ms = 1'000'000;

// Sent together at 0: `held` admitted and answered after `hold_ms`, `refused` denied in 1 ms.
std::vector<ProbeRequest> batch(int held, int refused, int64_t hold_ms = 400) {
  std::vector<ProbeRequest> requests;
  for (int i = 0; i < held; ++i)
    requests.push_back({hold_ms * k_ms / 2, Outcome::allowed, std::nullopt, hold_ms * k_ms});
  for (int i = 0; i < refused; ++i)
    requests.push_back({k_ms / 2, Outcome::denied, std::nullopt, k_ms});
  return requests;
}

}  // namespace

TEST_CASE("concurrency probe: two batches each admitting 2 held past their denials read as 2") {
  const AtOnceBatch first = read_at_once(batch(2, 14));
  CHECK(first.admitted == 2);
  CHECK(first.denied == 14);
  CHECK(first.held_past_a_denial == 2);
  std::string why_not;
  CHECK(cap_from_batches(first, read_at_once(batch(2, 14)), why_not) == 2);
  // One fewer the second time (a slot not yet released): still the most admitted at once.
  CHECK(cap_from_batches(first, read_at_once(batch(1, 15)), why_not) == 2);
  CHECK(fastest_admission_ns(batch(2, 14, 350)) == 350 * k_ms);
}

TEST_CASE("concurrency probe: a limiter that counts what it admitted is no cap") {
  std::string why_not;
  // A window of 5: the second batch so soon finds no room.
  CHECK_FALSE(cap_from_batches(read_at_once(batch(5, 11)), read_at_once(batch(0, 16)), why_not));
  CHECK(why_not.find("counted") != std::string::npos);
  // Nothing denied: no cap below the batch.
  CHECK_FALSE(cap_from_batches(read_at_once(batch(16, 0)), read_at_once(batch(16, 0)), why_not));
  // Admissions answered before the denials: nothing was held while others were refused.
  std::vector<ProbeRequest> quick = batch(2, 14, 0);
  for (ProbeRequest& request : quick) {
    if (request.outcome == Outcome::denied)
      request = {5 * k_ms, Outcome::denied, std::nullopt, 2 * k_ms};
  }
  CHECK_FALSE(cap_from_batches(read_at_once(quick), read_at_once(quick), why_not));
  CHECK(why_not.find("held") != std::string::npos);
}
