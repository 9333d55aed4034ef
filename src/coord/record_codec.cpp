#include "coord/record_codec.hpp"

#include <fmt/format.h>

namespace rlcheck::coord {
namespace {

constexpr uint8_t k_version = 4;  // 4: each record's cost

// The hint resolution travels shifted left by six, beside these booleans (bits 0 and 1) and the
// clock skew's index (bits 2 to 5: --clock-skew takes at most 16 offsets).
constexpr uint64_t k_reset_from_date = 1 << 0;
constexpr uint64_t k_retry_from_date = 1 << 1;
constexpr int k_skew_shift = 2;
constexpr uint64_t k_skew_mask = 0xf;
constexpr int k_resolution_shift = 6;
// In the outcome byte, above the error kind: a cost other than 1 follows the resolution.
constexpr uint8_t k_has_cost = 1 << 7;
constexpr uint8_t k_has_remaining_units = 1 << 6;  // units left (x-ratelimit-remaining-tokens)

// Which optional fields follow, and the booleans, in one byte.
enum Flag : uint8_t {
  k_hint_expected = 1 << 0,
  k_hint_invalid = 1 << 1,
  k_header_problem = 1 << 2,
  k_retry = 1 << 3,
  k_remaining = 1 << 4,
  k_advertised_limit = 1 << 5,
  k_advertised_reset = 1 << 6,
  k_advertised_window = 1 << 7,
};

// Instants travel as differences; a hostile chunk may make them overflow, so the arithmetic
// wraps (as unsigned) rather than being undefined. Encoding and decoding wrap alike.
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Signed values zigzag-encoded, so small negatives stay short.
void put_signed(std::string& out, int64_t value) {
  put_varint(out, (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }

  std::expected<uint64_t, std::string> varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == bytes_.size())
        return std::unexpected(fmt::format("truncated at byte {}", at_));
      const auto byte = static_cast<uint8_t>(bytes_[at_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0)
        return value;
    }
    return std::unexpected(fmt::format("a number longer than 64 bits at byte {}", at_));
  }
  std::expected<int64_t, std::string> signed_varint() {
    auto raw = varint();
    if (!raw)
      return std::unexpected(raw.error());
    return static_cast<int64_t>((*raw >> 1) ^ (~(*raw & 1) + 1));
  }
  std::expected<uint8_t, std::string> byte() {
    if (at_ == bytes_.size())
      return std::unexpected(fmt::format("truncated at byte {}", at_));
    return static_cast<uint8_t>(bytes_[at_++]);
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

#define RLCHECK_READ(name, expr) \
  auto name = (expr);            \
  if (!name)                     \
    return std::unexpected(name.error());

std::expected<void, std::string> decode_one(Reader& in, uint64_t& seq, int64_t& sent_ns,
                                            engine::RecordLog& into) {
  engine::RequestRecord record;
  RLCHECK_READ(seq_step, in.signed_varint());
  RLCHECK_READ(identity, in.varint());
  RLCHECK_READ(sent_step, in.signed_varint());
  RLCHECK_READ(latency, in.signed_varint());
  RLCHECK_READ(outcome_error, in.byte());
  RLCHECK_READ(flags, in.byte());
  RLCHECK_READ(bucket, in.signed_varint());
  RLCHECK_READ(status, in.varint());
  RLCHECK_READ(resolution, in.varint());
  uint64_t cost = 1;
  if ((*outcome_error & k_has_cost) != 0) {
    RLCHECK_READ(read_cost, in.varint());
    cost = *read_cost;
  }
  std::optional<int64_t> remaining_units;
  if ((*outcome_error & k_has_remaining_units) != 0) {
    RLCHECK_READ(read_units, in.signed_varint());
    remaining_units = *read_units;
  }
  const auto outcome = *outcome_error & 3;
  const auto error = (*outcome_error & ~(k_has_cost | k_has_remaining_units)) >> 2;
  if (outcome > static_cast<uint8_t>(engine::Outcome::error) ||
      error > static_cast<uint8_t>(engine::ErrorKind::too_large)) {
    return std::unexpected(fmt::format("an outcome or error kind out of range ({})",
                                       static_cast<int>(*outcome_error)));
  }
  if (*identity > UINT32_MAX || *status > UINT16_MAX || cost < 1 || cost > INT32_MAX ||
      (*resolution >> k_resolution_shift) > INT32_MAX)
    return std::unexpected("an identity, status, cost or hint resolution out of range");
  seq += static_cast<uint64_t>(*seq_step);
  sent_ns = wrapping_add(sent_ns, *sent_step);
  // Instants are offsets from a run's start: decades either way are no run's.
  constexpr int64_t k_longest_ns = int64_t{1} << 60;
  if (sent_ns < -k_longest_ns || sent_ns > k_longest_ns || *latency < -k_longest_ns ||
      *latency > k_longest_ns) {
    return std::unexpected("an instant out of range");
  }
  record.seq = seq;
  record.identity = static_cast<uint32_t>(*identity);
  record.sent_ns = sent_ns;
  record.replied_ns = wrapping_add(sent_ns, *latency);
  record.outcome = static_cast<engine::Outcome>(outcome);
  record.error = static_cast<engine::ErrorKind>(error);
  record.hint_expected = (*flags & k_hint_expected) != 0;
  record.hint_invalid = (*flags & k_hint_invalid) != 0;
  record.header_problem = (*flags & k_header_problem) != 0;
  record.bucket = *bucket;
  record.status = static_cast<uint16_t>(*status);
  record.hint_resolution_ms = static_cast<int32_t>(*resolution >> k_resolution_shift);
  record.clock_skew = static_cast<uint8_t>((*resolution >> k_skew_shift) & k_skew_mask);
  record.reset_from_date = (*resolution & k_reset_from_date) != 0;
  record.retry_from_date = (*resolution & k_retry_from_date) != 0;
  record.cost = static_cast<int32_t>(cost);
  record.remaining_units = remaining_units;
  const std::pair<Flag, std::optional<int64_t>*> optionals[] = {
      {k_retry, &record.retry_ms},
      {k_remaining, &record.remaining},
      {k_advertised_limit, &record.advertised_limit},
      {k_advertised_reset, &record.advertised_reset_s},
      {k_advertised_window, &record.advertised_window_s},
  };
  for (const auto& [flag, field] : optionals) {
    if ((*flags & flag) == 0)
      continue;
    RLCHECK_READ(value, in.signed_varint());
    *field = *value;
  }
  into.push_back(record);
  return {};
}

#undef RLCHECK_READ

}  // namespace

std::string encode_records(engine::RecordView records, size_t begin, size_t end, int64_t shift_ns) {
  std::string out;
  out.reserve((end - begin) * 12 + 16);
  out.push_back(static_cast<char>(k_version));
  put_varint(out, end - begin);
  uint64_t seq = 0;
  int64_t sent_ns = 0;
  for (size_t i = begin; i < end; ++i) {
    const engine::RequestRecord record = records[i];
    const int64_t sent = wrapping_add(record.sent_ns, shift_ns);
    put_signed(out, static_cast<int64_t>(record.seq - seq));
    put_varint(out, record.identity);
    put_signed(out, wrapping_sub(sent, sent_ns));
    put_signed(out, wrapping_sub(record.replied_ns, record.sent_ns));
    out.push_back(static_cast<char>(static_cast<uint8_t>(record.outcome) |
                                    static_cast<uint8_t>(static_cast<uint8_t>(record.error) << 2) |
                                    (record.cost != 1 ? k_has_cost : 0) |
                                    (record.remaining_units ? k_has_remaining_units : 0)));
    uint8_t flags = 0;
    flags |= record.hint_expected ? k_hint_expected : 0;
    flags |= record.hint_invalid ? k_hint_invalid : 0;
    flags |= record.header_problem ? k_header_problem : 0;
    flags |= record.retry_ms ? k_retry : 0;
    flags |= record.remaining ? k_remaining : 0;
    flags |= record.advertised_limit ? k_advertised_limit : 0;
    flags |= record.advertised_reset_s ? k_advertised_reset : 0;
    flags |= record.advertised_window_s ? k_advertised_window : 0;
    out.push_back(static_cast<char>(flags));
    put_signed(out, record.bucket);
    put_varint(out, record.status);
    put_varint(
        out, (static_cast<uint64_t>(std::max(record.hint_resolution_ms, 0)) << k_resolution_shift) |
                 ((record.clock_skew & k_skew_mask) << k_skew_shift) |
                 (record.reset_from_date ? k_reset_from_date : uint64_t{0}) |
                 (record.retry_from_date ? k_retry_from_date : uint64_t{0}));
    if (record.cost != 1)
      put_varint(out, static_cast<uint64_t>(std::max(record.cost, 1)));
    if (record.remaining_units)
      put_signed(out, *record.remaining_units);
    for (const auto* field : {&record.retry_ms, &record.remaining, &record.advertised_limit,
                              &record.advertised_reset_s, &record.advertised_window_s}) {
      if (*field)
        put_signed(out, **field);
    }
    seq = record.seq;
    sent_ns = sent;
  }
  return out;
}

std::expected<void, std::string> decode_records(std::string_view bytes, engine::RecordLog& into) {
  Reader in(bytes);
  auto version = in.byte();
  if (!version)
    return std::unexpected("an empty chunk of records");
  if (*version != k_version)
    return std::unexpected(
        fmt::format("records in format {} (this rlcheck reads {}): run the same rlcheck on every "
                    "worker",
                    static_cast<int>(*version), static_cast<int>(k_version)));
  auto count = in.varint();
  if (!count)
    return std::unexpected(count.error());
  // Each record takes at least 9 bytes: a count beyond what the chunk holds is a lie.
  if (*count > bytes.size() / 9)
    return std::unexpected(
        fmt::format("a chunk claiming {} records in {} bytes", *count, bytes.size()));
  uint64_t seq = 0;
  int64_t sent_ns = 0;
  for (uint64_t i = 0; i < *count; ++i) {
    if (auto decoded = decode_one(in, seq, sent_ns, into); !decoded)
      return std::unexpected(fmt::format("record {}: {}", i, decoded.error()));
  }
  if (!in.done())
    return std::unexpected("bytes left after the records");
  return {};
}

}  // namespace rlcheck::coord
