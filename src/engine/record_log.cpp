#include "engine/record_log.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

namespace rlcheck::engine {

namespace {

constexpr int32_t k_absent = std::numeric_limits<int32_t>::min();
constexpr uint8_t k_bucket_relative = 1;

// The fields most records of a run share, interned.
struct Context {
  uint16_t status = 0;
  bool hint_expected = false;
  bool hint_invalid = false;
  bool header_problem = false;
  int32_t hint_resolution_ms = 1;
  std::optional<int64_t> advertised_limit;
  std::optional<int64_t> advertised_reset_s;
  std::optional<int64_t> advertised_window_s;
  bool reset_from_date = false;
  bool retry_from_date = false;
  uint8_t clock_skew = 0;  // a handful of offsets: as shared as the status
  int32_t cost = 1;        // a few distinct costs (--cost-dist): shared as well

  auto key() const {
    return std::tuple(status, hint_expected, hint_invalid, header_problem, hint_resolution_ms,
                      advertised_limit, advertised_reset_s, advertised_window_s, reset_from_date,
                      retry_from_date, clock_skew, cost);
  }
  bool operator<(const Context& other) const { return key() < other.key(); }
  bool operator==(const Context& other) const { return key() == other.key(); }
  // The record's fields are this context's: what nearly every record of a run asks, read
  // without building a Context of it.
  bool matches(const RequestRecord& record) const {
    return status == record.status && hint_expected == record.hint_expected &&
           hint_invalid == record.hint_invalid && header_problem == record.header_problem &&
           hint_resolution_ms == record.hint_resolution_ms &&
           reset_from_date == record.reset_from_date && retry_from_date == record.retry_from_date &&
           clock_skew == record.clock_skew && cost == record.cost &&
           advertised_limit == record.advertised_limit &&
           advertised_reset_s == record.advertised_reset_s &&
           advertised_window_s == record.advertised_window_s;
  }
};

Context context_of(const RequestRecord& record) {
  return {record.status,
          record.hint_expected,
          record.hint_invalid,
          record.header_problem,
          record.hint_resolution_ms,
          record.advertised_limit,
          record.advertised_reset_s,
          record.advertised_window_s,
          record.reset_from_date,
          record.retry_from_date,
          record.clock_skew,
          record.cost};
}

std::optional<int32_t> narrow(int64_t value) {
  if (value <= k_absent || value > std::numeric_limits<int32_t>::max())
    return std::nullopt;
  return static_cast<int32_t>(value);
}

// An optional value packed with k_absent for "none"; nullopt when it does not fit.
std::optional<int32_t> pack_optional(const std::optional<int64_t>& value) {
  if (!value)
    return k_absent;
  return narrow(*value);
}

std::optional<int64_t> unpack_optional(int32_t packed) {
  if (packed == k_absent)
    return std::nullopt;
  return packed;
}

}  // namespace

struct RecordTables {
  uint64_t first_seq = 0;
  std::optional<int64_t> bucket_base;  // set by the first bucket that does not fit 32 bits
  // Per context (by index), a record holding its fields: decoding copies it and sets the rest.
  std::vector<RequestRecord> context_records;
  std::map<Context, uint16_t> context_index;
  // The contexts interned last: most records repeat one of a few (a run's costs drawn from a
  // distribution alternate between them), so the map is searched only for the others.
  std::array<std::optional<std::pair<Context, uint16_t>>, 8> recent;
  size_t next_recent = 0;
  std::vector<RequestRecord> whole;  // records a field of which does not fit its packed range

  std::optional<uint16_t> intern(const RequestRecord& record) {
    for (const auto& seen : recent) {
      if (seen && seen->first.matches(record))
        return seen->second;
    }
    const Context context = context_of(record);
    auto found = context_index.find(context);
    if (found == context_index.end()) {
      if (context_records.size() >= k_whole_context)
        return std::nullopt;
      const auto index = static_cast<uint16_t>(context_records.size());
      context_records.push_back(record_of(context));
      found = context_index.emplace(context, index).first;
    }
    recent[next_recent] = *found;
    next_recent = (next_recent + 1) % recent.size();
    return found->second;
  }

  static RequestRecord record_of(const Context& context) {
    RequestRecord record;
    record.status = context.status;
    record.hint_expected = context.hint_expected;
    record.hint_invalid = context.hint_invalid;
    record.header_problem = context.header_problem;
    record.hint_resolution_ms = context.hint_resolution_ms;
    record.advertised_limit = context.advertised_limit;
    record.advertised_reset_s = context.advertised_reset_s;
    record.advertised_window_s = context.advertised_window_s;
    record.reset_from_date = context.reset_from_date;
    record.retry_from_date = context.retry_from_date;
    record.clock_skew = context.clock_skew;
    record.cost = context.cost;
    return record;
  }
};

RequestRecord RecordView::operator[](size_t index) const {
  if (const RequestRecord* record = unpacked(index))
    return *record;
  const PackedRecord& p = packed_[index];
  RequestRecord record = tables_->context_records[p.context];
  fill_packed(p, record);
  return record;
}

void RecordView::fill_packed(const PackedRecord& p, RequestRecord& record) const {
  record.seq = tables_->first_seq + p.seq_offset;
  record.identity = p.identity;
  record.sent_ns = packed_sent_ns(p);
  record.replied_ns = record.sent_ns + static_cast<int64_t>(p.latency_ns);
  record.outcome = static_cast<Outcome>(p.outcome_error & 3U);
  record.error = static_cast<ErrorKind>(p.outcome_error >> 2U);
  record.retry_ms = unpack_optional(p.retry_ms);
  record.remaining = unpack_optional(p.remaining);
  record.bucket = (p.flags & k_bucket_relative) != 0 ? *tables_->bucket_base + p.bucket : p.bucket;
}

const RequestRecord& RecordCursor::operator[](size_t index) {
  if (const RequestRecord* whole = view_.unpacked(index)) {
    record_ = *whole;
    context_ = k_no_context;
    return record_;
  }
  const PackedRecord& p = view_.packed_[index];
  if (p.context != context_) {
    record_ = view_.tables_->context_records[p.context];
    context_ = p.context;
  }
  view_.fill_packed(p, record_);
  return record_;
}

int32_t RecordView::cost(size_t index) const {
  if (const RequestRecord* record = unpacked(index))
    return record->cost;
  return tables_->context_records[packed_[index].context].cost;
}

uint64_t RecordView::seq(size_t index) const {
  if (const RequestRecord* record = unpacked(index))
    return record->seq;
  return tables_->first_seq + packed_[index].seq_offset;
}

const RequestRecord* RecordView::unpacked(size_t index) const {
  if (plain_ != nullptr)
    return &plain_[index];
  const PackedRecord& p = packed_[index];
  return p.context == k_whole_context ? &tables_->whole[p.seq_offset] : nullptr;
}

RecordView RecordView::subspan(size_t offset, size_t count) const {
  RecordView part = *this;
  if (plain_ != nullptr)
    part.plain_ += offset;
  else
    part.packed_ += offset;
  part.size_ = count;
  return part;
}

RecordLog::RecordLog(uint64_t first_seq) : tables_(std::make_shared<RecordTables>()) {
  tables_->first_seq = first_seq;
}

RecordLog::RecordLog(const std::vector<RequestRecord>& records) : RecordLog() {
  packed_.reserve(records.size());
  for (const RequestRecord& record : records)
    push_back(record);
}

RecordLog::RecordLog(std::initializer_list<RequestRecord> records) : RecordLog() {
  for (const RequestRecord& record : records)
    push_back(record);
}

void RecordLog::clear() {
  decltype(packed_)().swap(packed_);
  const uint64_t first_seq = tables_ ? tables_->first_seq : 0;
  tables_ = std::make_shared<RecordTables>();
  tables_->first_seq = first_seq;
}

void RecordLog::append(const RecordLog& other) {
  packed_.reserve(packed_.size() + other.size());
  const RecordView from = other.view();
  for (size_t i = 0; i < from.size(); ++i)
    push_back(from[i]);
}

namespace {

RequestRecord edited(RequestRecord record, const RecordEdit& edit) {
  if (edit.forget_window)
    record.bucket = 0;
  if (edit.unit_cost)
    record.cost = 1;
  record.identity /= std::max<uint32_t>(1, edit.identity_divisor);
  if (edit.denials_as_admissions && record.outcome == Outcome::denied)
    record.outcome = Outcome::allowed;
  return record;
}

}  // namespace

RecordLog RecordLog::edited_copy(const RecordEdit& edit) const {
  RecordLog copy;
  copy.tables_ = tables_;
  RecordTables& tables = *tables_;
  const RecordView from = view();
  // How many times record `i` is copied: its units, when it counts them.
  const auto times_of = [&](size_t i) -> int32_t {
    if (!edit.admissions_in_units)
      return 1;
    const PackedRecord& p = packed_[i];
    if (p.context == k_whole_context) {
      const RequestRecord record = edited(tables.whole[p.seq_offset], edit);
      const bool counts = record.outcome == Outcome::allowed || is_unknown(record);
      return counts ? std::max(record.cost, 1) : 1;
    }
    Outcome outcome = static_cast<Outcome>(p.outcome_error & 3U);
    if (edit.denials_as_admissions && outcome == Outcome::denied)
      outcome = Outcome::allowed;
    const auto error = static_cast<ErrorKind>(p.outcome_error >> 2U);
    const bool counts = outcome == Outcome::allowed ||
                        (outcome == Outcome::error && may_have_reached_limiter(error));
    return counts && !edit.unit_cost ? std::max(tables.context_records[p.context].cost, 1) : 1;
  };
  // A context's edited one, interned on first use (k_whole_context: not yet).
  std::vector<uint16_t> edited_contexts(tables.context_records.size(), k_whole_context);
  const auto edited_context = [&](uint16_t context) -> std::optional<uint16_t> {
    uint16_t& edited_one = edited_contexts[context];
    if (edited_one == k_whole_context) {
      const auto interned = tables.intern(edited(tables.context_records[context], edit));
      if (!interned)
        return std::nullopt;
      edited_one = *interned;
    }
    return edited_one;
  };
  // The packed record edited; nullopt when it is kept whole (or its edit must be).
  const auto packed_edit = [&](const PackedRecord& p) -> std::optional<PackedRecord> {
    if (p.context == k_whole_context)
      return std::nullopt;
    PackedRecord q = p;
    if (edit.unit_cost) {
      const auto context = edited_context(p.context);
      if (!context)
        return std::nullopt;
      q.context = *context;
    }
    if (edit.forget_window) {
      q.bucket = 0;
      q.flags = static_cast<uint8_t>(q.flags & ~k_bucket_relative);
    }
    q.identity /= std::max<uint32_t>(1, edit.identity_divisor);
    constexpr unsigned k_outcome_bits = 3U;
    if (edit.denials_as_admissions &&
        (q.outcome_error & k_outcome_bits) == static_cast<unsigned>(Outcome::denied)) {
      q.outcome_error = static_cast<uint8_t>((q.outcome_error & ~k_outcome_bits) |
                                             static_cast<unsigned>(Outcome::allowed));
    }
    return q;
  };
  size_t count = 0;
  for (size_t i = 0; i < size(); ++i)
    count += static_cast<size_t>(times_of(i));
  copy.packed_.reserve(count);
  for (size_t i = 0; i < size(); ++i) {
    std::optional<PackedRecord> q = packed_edit(packed_[i]);
    if (!q)
      q = copy.encode(edited(from[i], edit));
    for (int32_t k = times_of(i); k > 0; --k)
      copy.packed_.push_back(*q);
  }
  return copy;
}

uint64_t RecordLog::seq(size_t index) const {
  const PackedRecord& p = packed_[index];
  return p.context == k_whole_context ? tables_->whole[p.seq_offset].seq
                                      : tables_->first_seq + p.seq_offset;
}

uint32_t RecordLog::identity(size_t index) const {
  const PackedRecord& p = packed_[index];
  return p.context == k_whole_context ? tables_->whole[p.seq_offset].identity : p.identity;
}

PackedRecord RecordLog::encode(const RequestRecord& record) {
  RecordTables& tables = *tables_;
  PackedRecord p;
  const auto keep_whole = [&] {
    PackedRecord whole;
    whole.context = k_whole_context;
    whole.seq_offset = static_cast<uint32_t>(tables.whole.size());
    tables.whole.push_back(record);
    return whole;
  };
  const int64_t latency = record.replied_ns - record.sent_ns;
  const auto retry = pack_optional(record.retry_ms);
  const auto remaining = pack_optional(record.remaining);
  if (record.seq < tables.first_seq ||
      record.seq - tables.first_seq > std::numeric_limits<uint32_t>::max() || record.sent_ns < 0 ||
      latency < 0 || latency > std::numeric_limits<uint32_t>::max() || !retry || !remaining ||
      record.remaining_units.has_value() ||
      tables.whole.size() >= std::numeric_limits<uint32_t>::max()) {
    return keep_whole();
  }
  if (auto bucket = narrow(record.bucket)) {
    p.bucket = *bucket;
  } else {
    if (!tables.bucket_base)
      tables.bucket_base = record.bucket;
    int64_t difference = 0;
    if (__builtin_sub_overflow(record.bucket, *tables.bucket_base, &difference))
      return keep_whole();
    const auto relative = narrow(difference);
    if (!relative)
      return keep_whole();
    p.bucket = *relative;
    p.flags |= k_bucket_relative;
  }
  const auto context = tables.intern(record);
  if (!context)
    return keep_whole();
  p.context = *context;
  p.sent_low = static_cast<uint32_t>(static_cast<uint64_t>(record.sent_ns));
  p.sent_high = static_cast<uint32_t>(static_cast<uint64_t>(record.sent_ns) >> 32);
  p.seq_offset = static_cast<uint32_t>(record.seq - tables.first_seq);
  p.identity = record.identity;
  p.latency_ns = static_cast<uint32_t>(latency);
  p.retry_ms = *retry;
  p.remaining = *remaining;
  p.outcome_error = static_cast<uint8_t>(static_cast<unsigned>(record.outcome) |
                                         (static_cast<unsigned>(record.error) << 2U));
  return p;
}

void stable_sort_by_send(RecordView records, std::vector<uint32_t>& indices) {
  const auto earlier = [&](uint32_t a, uint32_t b) {
    return records.sent_ns(a) < records.sent_ns(b);
  };
  if (!std::is_sorted(indices.begin(), indices.end(), earlier))
    std::stable_sort(indices.begin(), indices.end(), earlier);
}

void RecordLog::sort_by_seq() {
  if (place_by_dense_seq())
    return;
  const RecordTables& tables = *tables_;
  const auto seq_of = [&](const PackedRecord& p) {
    return p.context == k_whole_context ? tables.whole[p.seq_offset].seq
                                        : tables.first_seq + p.seq_offset;
  };
  std::sort(packed_.begin(), packed_.end(),
            [&](const PackedRecord& a, const PackedRecord& b) { return seq_of(a) < seq_of(b); });
}

// A whole run's records hold every seq offset of a range once: each record's place is its
// offset, so following the permutation's cycles sorts in linear time, in place. False (the
// records in some other order, none lost) when they do not.
bool RecordLog::place_by_dense_seq() {
  if (packed_.empty())
    return true;
  uint32_t low = std::numeric_limits<uint32_t>::max(), high = 0;
  for (const PackedRecord& p : packed_) {
    if (p.context == k_whole_context)
      return false;
    low = std::min(low, p.seq_offset);
    high = std::max(high, p.seq_offset);
  }
  if (high - low != packed_.size() - 1)
    return false;
  for (size_t start = 0; start < packed_.size(); ++start) {
    for (;;) {
      const size_t to = packed_[start].seq_offset - low;
      if (to == start)
        break;
      if (packed_[to].seq_offset - low == to)
        return false;  // a seq twice
      std::swap(packed_[start], packed_[to]);
    }
  }
  return true;
}

void RecordLog::stable_sort_by_identity(size_t count) {
  if (count <= 1 || packed_.size() < 2)
    return;
  // Where each record goes: a counting sort by identity, then the permutation applied in place
  // by following its cycles.
  std::vector<size_t> next(count, 0);
  for (size_t i = 0; i < packed_.size(); ++i)
    ++next[identity(i) % count];
  size_t offset = 0;
  for (size_t& slot : next)
    offset += std::exchange(slot, offset);
  constexpr uint32_t k_done = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> destination(packed_.size());
  for (size_t i = 0; i < packed_.size(); ++i)
    destination[i] = static_cast<uint32_t>(next[identity(i) % count]++);
  for (size_t start = 0; start < packed_.size(); ++start) {
    if (destination[start] == k_done)
      continue;
    PackedRecord moving = packed_[start];
    size_t to = destination[start];
    destination[start] = k_done;
    while (to != start) {
      std::swap(moving, packed_[to]);
      const size_t after = destination[to];
      destination[to] = k_done;
      to = after;
    }
    packed_[start] = moving;
  }
}

}  // namespace rlcheck::engine
