#include "engine/record_log.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::engine::RecordLog;
using rlcheck::engine::RecordView;
using rlcheck::engine::RequestRecord;

namespace {

constexpr int64_t k_max = std::numeric_limits<int64_t>::max();
constexpr int64_t k_min = std::numeric_limits<int64_t>::min();

RequestRecord typical(uint64_t seq) {
  RequestRecord r;
  r.seq = seq;
  r.identity = static_cast<uint32_t>(seq % 3);
  r.sent_ns = 1'000'000 * static_cast<int64_t>(seq);
  r.replied_ns = r.sent_ns + 250'000;
  r.outcome = Outcome::denied;
  r.retry_ms = 900;
  r.remaining = 0;
  r.hint_expected = true;
  r.status = 429;
  r.hint_resolution_ms = 1000;
  r.advertised_limit = 10;
  r.advertised_reset_s = 1;
  r.advertised_window_s = 60;
  r.reset_from_date = seq % 2 == 0;
  r.retry_from_date = seq % 3 == 0;
  r.clock_skew = static_cast<uint8_t>(seq % 4);
  r.cost = static_cast<int32_t>(1 + seq % 3);  // --cost: shared like the status
  return r;
}

bool same(const RequestRecord& a, const RequestRecord& b) {
  return a.seq == b.seq && a.identity == b.identity && a.sent_ns == b.sent_ns &&
         a.replied_ns == b.replied_ns && a.outcome == b.outcome && a.error == b.error &&
         a.hint_expected == b.hint_expected && a.retry_ms == b.retry_ms &&
         a.remaining == b.remaining && a.bucket == b.bucket && a.status == b.status &&
         a.hint_invalid == b.hint_invalid && a.header_problem == b.header_problem &&
         a.hint_resolution_ms == b.hint_resolution_ms && a.advertised_limit == b.advertised_limit &&
         a.advertised_reset_s == b.advertised_reset_s &&
         a.advertised_window_s == b.advertised_window_s && a.clock_skew == b.clock_skew &&
         a.cost == b.cost;
}

// Every record comes back as written, and its view agrees field by field.
void check_round_trip(const std::vector<RequestRecord>& records, uint64_t first_seq = 0) {
  RecordLog log(first_seq);
  for (const RequestRecord& record : records)
    log.push_back(record);
  REQUIRE(log.size() == records.size());
  const RecordView view = log.view();
  for (size_t i = 0; i < records.size(); ++i) {
    CAPTURE(i);
    CHECK(same(log[i], records[i]));
    CHECK(view.sent_ns(i) == records[i].sent_ns);
    CHECK(view.replied_ns(i) == records[i].replied_ns);
    CHECK(view.outcome(i) == records[i].outcome);
    CHECK(log.seq(i) == records[i].seq);
    CHECK(log.identity(i) == records[i].identity);
  }
}

}  // namespace

TEST_CASE("record log: a typical record packs into 36 bytes and reads back whole") {
  static_assert(sizeof(rlcheck::engine::PackedRecord) == 36);
  check_round_trip({typical(0), typical(1), typical(2)});
}

TEST_CASE("record log: the clock skew's index comes back, every one of sixteen, with no growth") {
  std::vector<RequestRecord> records;
  for (uint8_t skew = 0; skew < 16; ++skew) {
    RequestRecord record = typical(skew);
    record.clock_skew = skew;
    records.push_back(record);
  }
  check_round_trip(records);
  RecordLog log(records);
  CHECK(log.view()[15].clock_skew == 15);
  CHECK(log[3].clock_skew == 3);
}

TEST_CASE("record log: missing hints stay missing, zero stays zero") {
  RequestRecord none = typical(0);
  none.retry_ms.reset();
  none.remaining.reset();
  none.advertised_limit.reset();
  none.advertised_reset_s.reset();
  none.advertised_window_s.reset();
  RequestRecord zero = typical(1);
  zero.retry_ms = 0;
  zero.remaining = 0;
  zero.advertised_reset_s = 0;
  check_round_trip({none, zero});
}

TEST_CASE("record log: hints out of the packed range, huge or negative, are kept exactly") {
  std::vector<RequestRecord> records;
  for (const int64_t value :
       {k_max, k_min, k_min + 1, int64_t{-1}, int64_t{-5}, int64_t{1} << 31, -(int64_t{1} << 31),
        (int64_t{1} << 31) - 1, -(int64_t{1} << 31) + 1, int64_t{86'400'000} * 365 * 1000}) {
    RequestRecord retry = typical(records.size());
    retry.retry_ms = value;
    records.push_back(retry);
    RequestRecord remaining = typical(records.size());
    remaining.remaining = value;
    records.push_back(remaining);
    RequestRecord advertised = typical(records.size());
    advertised.advertised_reset_s = value;
    advertised.advertised_limit = value;
    records.push_back(advertised);
  }
  check_round_trip(records);
}

TEST_CASE("record log: instants, latencies, seqs and buckets at the edges") {
  std::vector<RequestRecord> records;
  RequestRecord slow = typical(0);
  slow.replied_ns = slow.sent_ns + (int64_t{1} << 32);  // just past 32 bits of latency
  records.push_back(slow);
  RequestRecord slowest = typical(1);
  slowest.replied_ns = slowest.sent_ns + 0xFFFFFFFFLL;  // the longest packed latency
  records.push_back(slowest);
  RequestRecord backwards = typical(2);
  backwards.replied_ns = backwards.sent_ns - 1;
  records.push_back(backwards);
  RequestRecord unsent = typical(3);
  unsent.sent_ns = 0;
  unsent.replied_ns = 0;
  unsent.outcome = Outcome::error;
  unsent.error = ErrorKind::not_sent;
  records.push_back(unsent);
  RequestRecord late = typical(4);
  late.sent_ns = int64_t{3600} * 24 * 365 * 1'000'000'000;  // a year in: past 32 bits
  late.replied_ns = late.sent_ns + 5;
  records.push_back(late);
  RequestRecord negative = typical(5);
  negative.sent_ns = -10;
  records.push_back(negative);
  RequestRecord far_seq = typical(6);
  far_seq.seq = uint64_t{1} << 40;
  records.push_back(far_seq);
  RequestRecord early_seq = typical(7);
  early_seq.seq = 3;  // before the log's first seq
  records.push_back(early_seq);
  for (const int64_t bucket :
       {int64_t{0}, int64_t{-1}, int64_t{-2}, int64_t{1'800'000'000}, int64_t{18'000'000'000},
        int64_t{18'000'000'001}, int64_t{17'000'000'000}, k_max, k_min, int64_t{5}}) {
    RequestRecord windowed = typical(8 + records.size());
    windowed.bucket = bucket;
    records.push_back(windowed);
  }
  check_round_trip(records, 5);
}

TEST_CASE("record log: every outcome, error kind, status and flag") {
  std::vector<RequestRecord> records;
  for (int kind = 0; kind <= static_cast<int>(ErrorKind::transport); ++kind) {
    for (const Outcome outcome : {Outcome::allowed, Outcome::denied, Outcome::error}) {
      RequestRecord r = typical(records.size());
      r.outcome = outcome;
      r.error = static_cast<ErrorKind>(kind);
      r.status = static_cast<uint16_t>(records.size() * 37);
      r.hint_expected = kind % 2 == 0;
      r.hint_invalid = kind % 3 == 0;
      r.header_problem = kind % 5 == 0;
      r.hint_resolution_ms = kind % 2 == 0 ? 1 : 1000;
      records.push_back(r);
    }
  }
  RequestRecord max_status = typical(records.size());
  max_status.status = 65535;
  max_status.identity = std::numeric_limits<uint32_t>::max();
  records.push_back(max_status);
  check_round_trip(records);
}

TEST_CASE("record log: past 65535 distinct contexts, records are kept whole") {
  std::vector<RequestRecord> records;
  for (int64_t i = 0; i < 70'000; ++i) {
    RequestRecord r = typical(static_cast<uint64_t>(i));
    r.advertised_reset_s = i;
    records.push_back(r);
  }
  check_round_trip(records);
}

TEST_CASE("record log: set replaces, append re-encodes, copies are independent") {
  RecordLog log;
  log.push_back(typical(0));
  log.push_back(typical(1));
  RecordLog copy = log;
  RequestRecord changed = typical(1);
  changed.bucket = 42'000'000'000;
  copy.set(1, changed);
  CHECK(same(copy[1], changed));
  CHECK(same(log[1], typical(1)));
  RecordLog other(100);
  RequestRecord far = typical(100);
  far.retry_ms = k_max;
  other.push_back(far);
  log.append(other);
  REQUIRE(log.size() == 3);
  CHECK(same(log[2], far));
}

TEST_CASE("record log: sorting by seq, then stably by identity") {
  RecordLog log;
  for (const uint64_t seq : {5, 3, 0, 4, 1, 2})
    log.push_back(typical(seq));
  RequestRecord whole = typical(6);
  whole.retry_ms = k_max;
  log.push_back(whole);
  log.sort_by_seq();
  for (size_t i = 0; i < log.size(); ++i)
    CHECK(log.seq(i) == i);
  log.stable_sort_by_identity(3);
  std::vector<uint64_t> seqs;
  for (const RequestRecord& record : log)
    seqs.push_back(record.seq);
  CHECK(seqs == std::vector<uint64_t>{0, 3, 6, 1, 4, 2, 5});
  CHECK(log[2].retry_ms == k_max);
}

TEST_CASE("record view: plain records and subspans read the same as packed ones") {
  const std::vector<RequestRecord> plain{typical(0), typical(1), typical(2), typical(3)};
  const RecordLog log(plain);
  const RecordView from_plain = plain;
  const RecordView part = log.view().subspan(1, 2);
  REQUIRE(part.size() == 2);
  CHECK(same(part.front(), plain[1]));
  CHECK(same(part.back(), plain[2]));
  CHECK(same(from_plain.subspan(2, 2)[1], plain[3]));
  CHECK(std::distance(part.begin(), part.end()) == 2);
}

TEST_CASE("record log: a run's every seq sorts in place; gaps, repeats and whole records too") {
  std::mt19937_64 rng(7);
  const auto shuffled_log = [&](std::vector<RequestRecord> records) {
    std::shuffle(records.begin(), records.end(), rng);
    RecordLog log(100);
    for (const RequestRecord& record : records)
      log.push_back(record);
    return log;
  };
  const auto seqs_of = [](const RecordLog& log) {
    std::vector<uint64_t> seqs;
    for (size_t i = 0; i < log.size(); ++i)
      seqs.push_back(log.seq(i));
    return seqs;
  };
  std::vector<RequestRecord> dense;
  for (uint64_t seq = 100; seq < 1100; ++seq)
    dense.push_back(typical(seq));
  SUBCASE("every seq once: placed by seq, each record whole") {
    RecordLog log = shuffled_log(dense);
    log.sort_by_seq();
    for (size_t i = 0; i < log.size(); ++i)
      CHECK(same(log[i], dense[i]));
  }
  SUBCASE("a gap, a repeat or a record kept whole: sorted all the same, none lost") {
    std::vector<RequestRecord> gap(dense.begin(), dense.end() - 1);
    gap.erase(gap.begin() + 500);
    std::vector<RequestRecord> repeat = dense;
    repeat[10] = dense[11];
    std::vector<RequestRecord> whole = dense;
    whole[3].retry_ms = k_max;  // out of the packed range
    for (const auto& records : {gap, repeat, whole}) {
      RecordLog log = shuffled_log(records);
      log.sort_by_seq();
      std::vector<uint64_t> expected;
      for (const RequestRecord& record : records)
        expected.push_back(record.seq);
      std::sort(expected.begin(), expected.end());
      CHECK(seqs_of(log) == expected);
    }
  }
}

TEST_CASE("record view: replied_ns reads one field; indices sort stably by send") {
  std::vector<RequestRecord> records;
  for (uint64_t seq = 0; seq < 6; ++seq)
    records.push_back(typical(seq));
  records[1].sent_ns = records[4].sent_ns;  // a tie: kept in index order
  records[5].replied_ns = k_max;            // kept whole
  const RecordLog log(records);
  const RecordView view = log.view();
  for (size_t i = 0; i < records.size(); ++i)
    CHECK(view.replied_ns(i) == records[i].replied_ns);
  std::vector<uint32_t> indices{5, 4, 3, 2, 1, 0};
  rlcheck::engine::stable_sort_by_send(view, indices);
  CHECK(indices == std::vector<uint32_t>{0, 2, 3, 4, 1, 5});
  std::vector<uint32_t> in_order{0, 2, 3, 4, 1, 5};
  rlcheck::engine::stable_sort_by_send(view, in_order);
  CHECK(in_order == std::vector<uint32_t>{0, 2, 3, 4, 1, 5});
}

TEST_CASE("record log: an edited copy reads as every record edited, packed or kept whole") {
  std::vector<RequestRecord> records;
  for (uint64_t seq = 0; seq < 24; ++seq) {
    RequestRecord r = typical(seq);
    r.outcome = seq % 4 == 0 ? Outcome::allowed : seq % 4 == 1 ? Outcome::denied : Outcome::error;
    r.error = seq % 4 == 2   ? ErrorKind::timeout
              : seq % 4 == 3 ? ErrorKind::refused
                             : ErrorKind::none;
    r.bucket = seq % 5 == 0 ? 42'000'000'000 + static_cast<int64_t>(seq) : 7;  // relative, plain
    if (seq % 7 == 0)
      r.retry_ms = k_max;  // kept whole
    records.push_back(r);
  }
  RecordLog log(records);
  const RecordView before = log.view();
  for (int variant = 0; variant < 16; ++variant) {
    CAPTURE(variant);
    rlcheck::engine::RecordEdit edit;
    edit.forget_window = (variant & 1) != 0;
    edit.unit_cost = (variant & 2) != 0;
    edit.identity_divisor = (variant & 4) != 0 ? 2 : 1;
    edit.denials_as_admissions = (variant & 8) != 0;
    edit.admissions_in_units = variant % 3 == 0;
    std::vector<RequestRecord> expected;
    for (RequestRecord r : records) {
      if (edit.forget_window)
        r.bucket = 0;
      if (edit.unit_cost)
        r.cost = 1;
      r.identity /= edit.identity_divisor;
      if (edit.denials_as_admissions && r.outcome == Outcome::denied)
        r.outcome = Outcome::allowed;
      const bool counts = r.outcome == Outcome::allowed || rlcheck::engine::is_unknown(r);
      for (int k = edit.admissions_in_units && counts ? r.cost : 1; k > 0; --k)
        expected.push_back(r);
    }
    const RecordLog copy = log.edited_copy(edit);
    REQUIRE(copy.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      CAPTURE(i);
      CHECK(same(copy[i], expected[i]));
      CHECK(copy.view().cost(i) == expected[i].cost);
      CHECK(copy.identity(i) == expected[i].identity);
    }
    // The original reads as it did.
    for (size_t i = 0; i < records.size(); ++i)
      CHECK(same(before[i], records[i]));
  }
}
