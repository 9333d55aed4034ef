#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "coord/record_codec.hpp"

using namespace rlcheck;
using engine::ErrorKind;
using engine::Outcome;
using engine::RequestRecord;

namespace {

std::vector<RequestRecord> sample_records() {
  RequestRecord allowed;
  allowed.seq = 3;
  allowed.identity = 1;
  allowed.sent_ns = 1'000'000;
  allowed.replied_ns = 1'250'000;
  allowed.outcome = Outcome::allowed;
  allowed.remaining = 4;
  allowed.bucket = 28'000'123;
  allowed.clock_skew = 15;   // --clock-skew: the last of sixteen offsets
  allowed.cost = 1'000'000;  // --cost: the most one request may cost
  RequestRecord denied;
  denied.seq = 6;
  denied.identity = 0;
  denied.sent_ns = 900'000;  // earlier than the one before: deltas go negative
  denied.replied_ns = 2'000'000;
  denied.outcome = Outcome::denied;
  denied.hint_expected = true;
  denied.retry_ms = 59'999;
  denied.status = 429;
  denied.hint_resolution_ms = 1000;
  denied.advertised_limit = 10;
  denied.advertised_reset_s = 60;
  denied.advertised_window_s = 60;
  denied.header_problem = true;
  denied.reset_from_date = true;
  denied.clock_skew = 1;
  denied.cost = 7;
  RequestRecord failed;
  failed.seq = 1ULL << 33;
  failed.identity = 4'000'000'000U;
  failed.sent_ns = -5;
  failed.replied_ns = -5;
  failed.outcome = Outcome::error;
  failed.error = ErrorKind::too_large;
  failed.hint_invalid = true;
  failed.retry_ms = -1;
  failed.retry_from_date = true;
  return {allowed, denied, failed};
}

void check_same(const RequestRecord& a, const RequestRecord& b, int64_t shift_ns) {
  CHECK(a.seq == b.seq);
  CHECK(a.identity == b.identity);
  CHECK(a.sent_ns + shift_ns == b.sent_ns);
  CHECK(a.replied_ns + shift_ns == b.replied_ns);
  CHECK(a.outcome == b.outcome);
  CHECK(a.error == b.error);
  CHECK(a.hint_expected == b.hint_expected);
  CHECK(a.hint_invalid == b.hint_invalid);
  CHECK(a.header_problem == b.header_problem);
  CHECK(a.retry_ms == b.retry_ms);
  CHECK(a.remaining == b.remaining);
  CHECK(a.bucket == b.bucket);
  CHECK(a.status == b.status);
  CHECK(a.hint_resolution_ms == b.hint_resolution_ms);
  CHECK(a.advertised_limit == b.advertised_limit);
  CHECK(a.advertised_reset_s == b.advertised_reset_s);
  CHECK(a.advertised_window_s == b.advertised_window_s);
  CHECK(a.reset_from_date == b.reset_from_date);
  CHECK(a.retry_from_date == b.retry_from_date);
  CHECK(a.clock_skew == b.clock_skew);
  CHECK(a.cost == b.cost);
}

}  // namespace

TEST_CASE("record codec: records come back as written, moved by the shift") {
  const std::vector<RequestRecord> records = sample_records();
  const std::string bytes = coord::encode_records(records, 0, records.size(), 7'000);
  engine::RecordLog decoded;
  REQUIRE(coord::decode_records(bytes, decoded).has_value());
  REQUIRE(decoded.size() == records.size());
  for (size_t i = 0; i < records.size(); ++i)
    check_same(records[i], decoded[i], 7'000);
}

TEST_CASE("record codec: a range is encoded alone, and appended after what the log holds") {
  const std::vector<RequestRecord> records = sample_records();
  engine::RecordLog decoded;
  REQUIRE(coord::decode_records(coord::encode_records(records, 1, 3, 0), decoded).has_value());
  REQUIRE(coord::decode_records(coord::encode_records(records, 0, 1, 0), decoded).has_value());
  REQUIRE(decoded.size() == 3);
  check_same(records[1], decoded[0], 0);
  check_same(records[0], decoded[2], 0);
}

TEST_CASE("record codec: a typical record takes a dozen bytes or so") {
  std::vector<RequestRecord> records;
  for (uint64_t seq = 0; seq < 1000; ++seq) {
    RequestRecord record;
    record.seq = seq * 3;
    record.identity = static_cast<uint32_t>(seq % 4);
    record.sent_ns = static_cast<int64_t>(seq) * 16'000;
    record.replied_ns = record.sent_ns + 300'000;
    record.outcome = seq % 2 ? Outcome::allowed : Outcome::denied;
    record.retry_ms = 900;
    record.clock_skew = static_cast<uint8_t>(seq % 2);  // --clock-skew 0,+800ms
    records.push_back(record);
  }
  CHECK(coord::encode_records(records, 0, records.size(), 0).size() < 16 * records.size());
}

TEST_CASE("record codec: truncated, lying or foreign chunks are errors, not crashes") {
  const std::vector<RequestRecord> records = sample_records();
  const std::string bytes = coord::encode_records(records, 0, records.size(), 0);
  for (size_t length = 0; length < bytes.size(); ++length) {
    engine::RecordLog decoded;
    CHECK_FALSE(coord::decode_records(bytes.substr(0, length), decoded).has_value());
  }
  engine::RecordLog decoded;
  CHECK_FALSE(coord::decode_records(bytes + "x", decoded).has_value());
  std::string other_version = bytes;
  other_version[0] = 9;
  const auto foreign = coord::decode_records(other_version, decoded);
  REQUIRE_FALSE(foreign.has_value());
  CHECK(foreign.error().find("same rlcheck") != std::string::npos);
  std::string lying = bytes;
  lying[1] = 0x7f;  // claims 127 records in a few dozen bytes
  CHECK_FALSE(coord::decode_records(lying, decoded).has_value());
}
