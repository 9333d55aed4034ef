#pragma once
// A run's records, packed: 36 bytes a request instead of a RequestRecord's 136, so an hour-long
// run fits in memory. Each record keeps its instants to the nanosecond and its hints exactly;
// what repeats (status, hint resolution and flags, the advertised limit / reset / window) is an
// index into a small table of contexts, and a record a field of which does not fit its packed
// range is kept whole on the side. Reading gives back the RequestRecord that was written.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

#include "engine/huge_page_allocator.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::engine {

// One request as kept. Instants are split in 32-bit halves so the record packs to 4 bytes.
struct PackedRecord {
  uint32_t sent_low = 0;      // sent_ns, low and high halves
  uint32_t sent_high = 0;     //
  uint32_t seq_offset = 0;    // seq - the log's first seq; whole records: their index
  uint32_t identity = 0;      //
  uint32_t latency_ns = 0;    // replied_ns - sent_ns
  int32_t retry_ms = 0;       // k_absent when the reply carried none
  int32_t remaining = 0;      // k_absent when the reply carried none
  int32_t bucket = 0;         // the window index, or its offset from the log's bucket base
  uint8_t outcome_error = 0;  // outcome in the low 2 bits, error above
  uint8_t flags = 0;          // k_bucket_relative
  uint16_t context = 0;       // index into the log's contexts; k_whole: kept whole on the side
};
static_assert(sizeof(PackedRecord) == 36);
// PackedRecord::context of a record kept whole on the side.
inline constexpr uint16_t k_whole_context = 0xFFFF;

// What the records of a log share: the contexts, whole records, and the bases offsets count from.
struct RecordTables;

class RecordIterator;

// A read-only view of records: packed ones in a log, or plain RequestRecords (what tests and
// small sets hand over). Indexing decodes; iteration yields RequestRecord values, so a
// reference to an element lives only as long as the loop's step (never keep its address).
class RecordView {
 public:
  RecordView() = default;
  RecordView(const std::vector<RequestRecord>& plain)  // NOLINT: tests hand vectors over
      : plain_(plain.data()), size_(plain.size()) {}
  RecordView(std::span<const RequestRecord> plain)  // NOLINT
      : plain_(plain.data()), size_(plain.size()) {}
  RecordView(const PackedRecord* packed, size_t size, const RecordTables* tables)
      : packed_(packed), tables_(tables), size_(size) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  RequestRecord operator[](size_t index) const;
  // Single fields, without decoding the whole record (for sorting and filtering).
  // Inline for the packed record: the audits read them for every record, several times.
  int64_t sent_ns(size_t index) const {
    if (const PackedRecord* p = packed_at(index))
      return packed_sent_ns(*p);
    return unpacked(index)->sent_ns;
  }
  int64_t replied_ns(size_t index) const {
    if (const PackedRecord* p = packed_at(index))
      return packed_sent_ns(*p) + static_cast<int64_t>(p->latency_ns);
    return unpacked(index)->replied_ns;
  }
  Outcome outcome(size_t index) const {
    if (const PackedRecord* p = packed_at(index))
      return static_cast<Outcome>(p->outcome_error & 3U);
    return unpacked(index)->outcome;
  }
  // The record's seq and cost, without decoding it.
  uint64_t seq(size_t index) const;
  int32_t cost(size_t index) const;
  RequestRecord front() const { return (*this)[0]; }
  RequestRecord back() const { return (*this)[size_ - 1]; }
  RecordIterator begin() const;
  RecordIterator end() const;
  RecordView subspan(size_t offset, size_t count) const;

 private:
  // The record as kept whole (plain, or outside the packed ranges); null when packed.
  const RequestRecord* unpacked(size_t index) const;
  // The record packed; null when kept whole.
  const PackedRecord* packed_at(size_t index) const {
    if (plain_ != nullptr || packed_[index].context == k_whole_context)
      return nullptr;
    return &packed_[index];
  }
  static int64_t packed_sent_ns(const PackedRecord& p) {
    return static_cast<int64_t>((static_cast<uint64_t>(p.sent_high) << 32) | p.sent_low);
  }

  friend class RecordCursor;
  // Sets the fields `p` keeps itself (the rest are its context's).
  void fill_packed(const PackedRecord& p, RequestRecord& record) const;

  const RequestRecord* plain_ = nullptr;
  const PackedRecord* packed_ = nullptr;
  const RecordTables* tables_ = nullptr;
  size_t size_ = 0;
};

// Holds its view by value, so iterating a temporary view (a log's) is safe.
class RecordIterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = RequestRecord;
  using difference_type = std::ptrdiff_t;
  using reference = RequestRecord;
  using pointer = void;
  RecordIterator() = default;
  RecordIterator(const RecordView& view, size_t index) : view_(view), index_(index) {}
  RequestRecord operator*() const { return view_[index_]; }
  RequestRecord operator[](difference_type n) const {
    return view_[index_ + static_cast<size_t>(n)];
  }
  RecordIterator& operator++() { return ++index_, *this; }
  RecordIterator operator++(int) { return {view_, index_++}; }
  RecordIterator& operator--() { return --index_, *this; }
  RecordIterator operator--(int) { return {view_, index_--}; }
  RecordIterator& operator+=(difference_type n) { return index_ += static_cast<size_t>(n), *this; }
  RecordIterator& operator-=(difference_type n) { return index_ -= static_cast<size_t>(n), *this; }
  RecordIterator operator+(difference_type n) const {
    return {view_, index_ + static_cast<size_t>(n)};
  }
  RecordIterator operator-(difference_type n) const {
    return {view_, index_ - static_cast<size_t>(n)};
  }
  friend RecordIterator operator+(difference_type n, const RecordIterator& it) { return it + n; }
  difference_type operator-(const RecordIterator& other) const {
    return static_cast<difference_type>(index_) - static_cast<difference_type>(other.index_);
  }
  bool operator==(const RecordIterator& other) const { return index_ == other.index_; }
  bool operator<(const RecordIterator& other) const { return index_ < other.index_; }
  bool operator>(const RecordIterator& other) const { return index_ > other.index_; }
  bool operator<=(const RecordIterator& other) const { return index_ <= other.index_; }
  bool operator>=(const RecordIterator& other) const { return index_ >= other.index_; }

 private:
  RecordView view_;
  size_t index_ = 0;
};

inline RecordIterator RecordView::begin() const {
  return {*this, 0};
}
inline RecordIterator RecordView::end() const {
  return {*this, size_};
}

// Decodes records of a view one after another into one RequestRecord, copying the fields a
// context shares only when the context changes: what a pass over a run's records (nearly all
// of one context) costs per record. The reference is valid until the next call.
class RecordCursor {
 public:
  explicit RecordCursor(RecordView view) : view_(view) {}
  const RequestRecord& operator[](size_t index);

 private:
  static constexpr uint32_t k_no_context = 0xFFFFFFFF;
  RecordView view_;
  RequestRecord record_;
  uint32_t context_ = k_no_context;  // whose shared fields record_ holds
};

// Orders `indices` into `records` by send instant, equal sends keeping their order. A run's
// records (by seq) are mostly in send order already: that costs one pass.
void stable_sort_by_send(RecordView records, std::vector<uint32_t>& indices);

// What RecordLog::edited_copy changes of every record; the rest is kept as it is.
struct RecordEdit {
  bool forget_window = false;          // bucket 0: the copy places its own windows
  bool unit_cost = false;              // cost 1
  uint32_t identity_divisor = 1;       // identity / divisor (a group of identities)
  bool denials_as_admissions = false;  // a denial reads as an admission
  // An admission, or a request that may have been one unseen (is_unknown), repeated once per
  // unit of its cost (at least once): the copy counts units.
  bool admissions_in_units = false;
};

// The records of one run, packed. Copies share the (append-only) tables.
class RecordLog {
 public:
  // `first_seq`: the seq offsets count from it (a run's load.first_seq).
  explicit RecordLog(uint64_t first_seq = 0);
  RecordLog(const std::vector<RequestRecord>& records);  // NOLINT: tests and small sets
  RecordLog(std::initializer_list<RequestRecord> records);

  size_t size() const { return packed_.size(); }
  bool empty() const { return packed_.empty(); }
  void reserve(size_t count) { packed_.reserve(count); }
  void clear();
  void push_back(const RequestRecord& record) { packed_.push_back(encode(record)); }
  // Appends every record of `other` (re-encoded: the two logs' tables differ).
  void append(const RecordLog& other);
  // The records, in order, with `edit` applied; sharing this log's tables, so packed records
  // are copied without decoding (only a changed cost interns a context, once a context).
  RecordLog edited_copy(const RecordEdit& edit) const;
  // Replaces record `index`.
  void set(size_t index, const RequestRecord& record) { packed_[index] = encode(record); }

  RequestRecord operator[](size_t index) const { return view()[index]; }
  RequestRecord front() const { return view()[0]; }
  RequestRecord back() const { return view()[size() - 1]; }
  RecordView view() const { return {packed_.data(), packed_.size(), tables_.get()}; }
  operator RecordView() const { return view(); }  // NOLINT: checks take views
  RecordIterator begin() const { return view().begin(); }
  RecordIterator end() const { return view().end(); }
  uint64_t seq(size_t index) const;
  uint32_t identity(size_t index) const;

  // Orders the records by seq (in linear time when they are a run's every seq).
  void sort_by_seq();
  // Orders the records by identity % count, keeping the order within one identity (a stable
  // sort, in place, with one 32-bit index a record of scratch).
  void stable_sort_by_identity(size_t count);

 private:
  PackedRecord encode(const RequestRecord& record);
  bool place_by_dense_seq();

  std::vector<PackedRecord, HugePageAllocator<PackedRecord>> packed_;
  std::shared_ptr<RecordTables> tables_;
};

}  // namespace rlcheck::engine
