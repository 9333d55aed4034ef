#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "checks/admission_peak.hpp"

using rlcheck::checks::AdmissionPeak;
using rlcheck::checks::AdmissionRule;
using rlcheck::checks::find_admission_peak;
using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_ms = 1'000'000;

RequestRecord record(int64_t sent_ns, int64_t replied_ns, Outcome outcome = Outcome::allowed,
                     int64_t bucket = 0) {
  RequestRecord r;
  r.sent_ns = sent_ns;
  r.replied_ns = replied_ns;
  r.outcome = outcome;
  r.bucket = bucket;
  return r;
}

AdmissionRule sliding(int64_t limit, int64_t window_ns) {
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::sliding;
  rule.limit = limit;
  rule.window_ns = window_ns;
  return rule;
}

AdmissionRule fixed(int64_t limit) {
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::fixed;
  rule.limit = limit;
  return rule;
}

AdmissionRule bucket(int64_t burst, double tokens_per_ns) {
  AdmissionRule rule;
  rule.kind = AdmissionRule::Kind::bucket;
  rule.burst = burst;
  rule.tokens_per_ns = tokens_per_ns;
  return rule;
}

// `count` admissions sent `gap` apart from `start`, each replied `latency` later.
std::vector<RequestRecord> admissions(int count, int64_t start, int64_t gap, int64_t latency) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < count; ++i)
    records.push_back(record(start + i * gap, start + i * gap + latency));
  return records;
}

}  // namespace

TEST_CASE("no admissions: nothing exceeded") {
  std::vector<RequestRecord> records{record(0, 10, Outcome::denied)};
  for (const AdmissionRule& rule : {sliding(10, k_ms), fixed(10), bucket(10, 1e-6)}) {
    const AdmissionPeak peak = find_admission_peak(records, rule);
    CHECK(peak.count == 0);
    CHECK_FALSE(peak.exceeded());
  }
}

TEST_CASE("sliding: 10 admissions inside one window count 10, within a limit of 10") {
  const auto records = admissions(10, 5'000, 1'000, 200);
  const AdmissionPeak peak = find_admission_peak(records, sliding(10, k_ms));
  CHECK(peak.count == 10);
  CHECK(peak.allowance == 10.0);
  CHECK_FALSE(peak.exceeded());
  CHECK(peak.start_ns == 5'000);
  CHECK(peak.length_ns == 9 * 1'000 + 200);  // first send to last reply
}

TEST_CASE("sliding: 11 admissions inside one window exceed a limit of 10") {
  const auto records = admissions(11, 0, 1'000, 200);
  const AdmissionPeak peak = find_admission_peak(records, sliding(10, k_ms));
  CHECK(peak.count == 11);
  CHECK(peak.exceeded());
}

TEST_CASE("sliding: denials and errors are not admissions") {
  auto records = admissions(10, 0, 1'000, 200);
  for (int i = 0; i < 10; ++i) {
    records.push_back(record(500 + i, 600 + i, Outcome::denied));
    records.push_back(record(700 + i, 800 + i, Outcome::error));
  }
  const AdmissionPeak peak = find_admission_peak(records, sliding(10, k_ms));
  CHECK(peak.count == 10);
  CHECK_FALSE(peak.exceeded());
}

TEST_CASE("sliding: 20 admissions spread evenly over two windows stay within the limit") {
  // One every window / limit: any window holds at most `limit` of them.
  const auto records = admissions(20, 0, k_ms / 10, 1'000);
  const AdmissionPeak peak = find_admission_peak(records, sliding(10, k_ms));
  CHECK(peak.count <= 10);
  CHECK(peak.count >= 9);
  CHECK_FALSE(peak.exceeded());
}

TEST_CASE("sliding: the record order does not matter") {
  auto records = admissions(11, 0, 1'000, 200);
  std::mt19937_64 rng(3);
  std::shuffle(records.begin(), records.end(), rng);
  CHECK(find_admission_peak(records, sliding(10, k_ms)).count == 11);
}

TEST_CASE("sliding: admissions that could have been a full window apart are not counted together") {
  // B's reply came a full window after A was sent: A and B may have been admitted a window
  // apart, which the limiter allows.
  std::vector<RequestRecord> apart{record(0, 10), record(500, 1'000)};
  CHECK(find_admission_peak(apart, sliding(1, 1'000)).count == 1);
  CHECK_FALSE(find_admission_peak(apart, sliding(1, 1'000)).exceeded());

  // One nanosecond earlier and both surely fell inside one window.
  std::vector<RequestRecord> together{record(0, 10), record(500, 999)};
  CHECK(find_admission_peak(together, sliding(1, 1'000)).count == 2);
  CHECK(find_admission_peak(together, sliding(1, 1'000)).exceeded());
}

TEST_CASE("sliding: a slow reply stretches the span of the admissions sent with it") {
  // Sent together, but the first one's reply took longer than the window: it may have been
  // admitted a window after the others.
  std::vector<RequestRecord> records{record(0, 2 * k_ms), record(10, 20), record(30, 40)};
  const AdmissionPeak peak = find_admission_peak(records, sliding(2, k_ms));
  CHECK(peak.count <= 2);
  CHECK_FALSE(peak.exceeded());
}

TEST_CASE("sliding: a slow earlier admission does not hide a burst that came after it") {
  // A: sent at 0, replied only after 5 windows. Then 11 admissions sent and replied within
  // 2 microseconds of each other: eleven admissions surely inside one window, limit 10.
  std::vector<RequestRecord> records{record(0, 5 * k_ms)};
  const auto burst = admissions(11, 100'000, 100, 50);
  records.insert(records.end(), burst.begin(), burst.end());
  const AdmissionPeak peak = find_admission_peak(records, sliding(10, k_ms));
  CHECK(peak.count >= 11);
  CHECK(peak.exceeded());
}

TEST_CASE("fixed: counts per window index, however close across a boundary") {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 10; ++i) {
    records.push_back(record(900 + i, 950 + i, Outcome::allowed, 5));
    records.push_back(record(1'000 + i, 1'050 + i, Outcome::allowed, 6));
  }
  const AdmissionPeak peak = find_admission_peak(records, fixed(10));
  CHECK(peak.count == 10);
  CHECK(peak.allowance == 10.0);
  CHECK_FALSE(peak.exceeded());
}

TEST_CASE("fixed: 11 in one window exceed, starting at that window's first send") {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 3; ++i)
    records.push_back(record(10 + i, 20 + i, Outcome::allowed, 1));
  for (int i = 10; i >= 0; --i)  // sent in reverse order
    records.push_back(record(5'000 + i, 6'000 + i, Outcome::allowed, 2));
  records.push_back(record(4'000, 4'100, Outcome::denied, 2));
  const AdmissionPeak peak = find_admission_peak(records, fixed(10));
  CHECK(peak.count == 11);
  CHECK(peak.exceeded());
  CHECK(peak.start_ns == 5'000);
}

TEST_CASE("bucket: a burst up to the capacity passes, one more exceeds") {
  const double one_per_ms = 1.0 / static_cast<double>(k_ms);
  const auto ten = admissions(10, 0, 0, 0);
  const AdmissionPeak at_capacity = find_admission_peak(ten, bucket(10, one_per_ms));
  CHECK(at_capacity.count == 10);
  CHECK_FALSE(at_capacity.exceeded());

  const auto eleven = admissions(11, 0, 0, 0);
  const AdmissionPeak over = find_admission_peak(eleven, bucket(10, one_per_ms));
  CHECK(over.count == 11);
  CHECK(over.allowance == doctest::Approx(10.0));
  CHECK(over.exceeded());
}

TEST_CASE("bucket: allows burst + rate * d over a span of length d") {
  const double one_per_ms = 1.0 / static_cast<double>(k_ms);
  // A full burst at 0, then exactly one admission per refill for 20 ms.
  auto records = admissions(10, 0, 0, 0);
  const auto refills = admissions(20, k_ms, k_ms, 0);
  records.insert(records.end(), refills.begin(), refills.end());
  CHECK_FALSE(find_admission_peak(records, bucket(10, one_per_ms)).exceeded());

  // One more at the end is one more than 10 + 20.
  records.push_back(record(20 * k_ms, 20 * k_ms));
  const AdmissionPeak over = find_admission_peak(records, bucket(10, one_per_ms));
  CHECK(over.exceeded());
  CHECK(over.count == 31);
  CHECK(over.allowance == doctest::Approx(30.0));
  CHECK(over.start_ns == 0);
  CHECK(over.length_ns == 20 * k_ms);
}

TEST_CASE("bucket: reply latency stretches the span in the limiter's favour") {
  const double one_per_ms = 1.0 / static_cast<double>(k_ms);
  // 11 sent at once, replied 1 ms later: a token may have been refilled meanwhile.
  const AdmissionPeak eleven =
      find_admission_peak(admissions(11, 0, 0, k_ms), bucket(10, one_per_ms));
  CHECK_FALSE(eleven.exceeded());
  const AdmissionPeak twelve =
      find_admission_peak(admissions(12, 0, 0, k_ms), bucket(10, one_per_ms));
  CHECK(twelve.exceeded());
}

TEST_CASE("--contract names map to the rules they audit") {
  using Kind = rlcheck::checks::AdmissionRule::Kind;
  CHECK(rlcheck::checks::contract_kind("sliding") == Kind::sliding);
  CHECK(rlcheck::checks::contract_kind("fixed") == Kind::fixed);
  CHECK(rlcheck::checks::contract_kind("token-bucket") == Kind::bucket);
  CHECK(rlcheck::checks::contract_kind("gcra") == Kind::bucket);
  CHECK_FALSE(rlcheck::checks::contract_kind("leaky").has_value());
}
