#include "redis/reply_reader.hpp"

#include <cstddef>
#include <new>

#include <hiredis/hiredis.h>

#include "redis/reply_pool.hpp"

namespace rlcheck::redis {
namespace {

// The pooled reply builders, wrapped to count each reply against the caps. A builder that
// returns null makes hiredis stop with an error; the tally says it was a cap.
const redisReplyObjectFunctions k_pooled = pooled_reply_functions();

ReplyTally& tally_of(const redisReadTask* task, size_t bytes, size_t elements) {
  auto& tally = *static_cast<ReplyTally*>(task->privdata);
  if (task->parent == nullptr)
    tally = {};  // a new reply
  tally.bytes += bytes;
  tally.elements += elements;
  if (tally.bytes > k_max_reply_bytes || tally.elements > k_max_reply_elements)
    tally.over_cap = true;
  return tally;
}

redisReplyObjectFunctions counting_builders() {
  redisReplyObjectFunctions builders = k_pooled;
  builders.createString = [](const redisReadTask* task, char* text, size_t length) -> void* {
    if (tally_of(task, length, 0).over_cap)
      return nullptr;
    return k_pooled.createString(task, text, length);
  };
  builders.createArray = [](const redisReadTask* task, int elements) -> void* {
    if (tally_of(task, 0, elements > 0 ? static_cast<size_t>(elements) : 0).over_cap)
      return nullptr;
    return k_pooled.createArray(task, elements);
  };
  builders.createInteger = [](const redisReadTask* task, long long value) -> void* {
    tally_of(task, 0, 0);
    return k_pooled.createInteger(task, value);
  };
  builders.createNil = [](const redisReadTask* task) -> void* {
    tally_of(task, 0, 0);
    return k_pooled.createNil(task);
  };
  return builders;
}

constexpr size_t k_most_scanned_digits = 18;  // so that no value overflows a long long

// ":<integer>\r\n" at `at`: the end of it, or null (another type, not whole, or longer). The
// integer is written as hiredis accepts it (string2ll): "0", or digits from 1-9 after an
// optional '-'.
const char* scan_integer(const char* at, const char* end, long long& value) {
  if (end - at < 4 || at[0] != ':')  // the shortest: ":0\r\n"
    return nullptr;
  ++at;
  if (at[0] == '0') {
    if (at[1] != '\r' || at[2] != '\n')
      return nullptr;
    value = 0;
    return at + 3;
  }
  const bool negative = at[0] == '-';
  at += negative ? 1 : 0;
  const char* const digits = at;
  const char* const last = end - digits > static_cast<ptrdiff_t>(k_most_scanned_digits)
                               ? digits + k_most_scanned_digits
                               : end;
  unsigned long long magnitude = 0;
  for (unsigned digit; at != last && (digit = static_cast<unsigned char>(*at - '0')) < 10; ++at)
    magnitude = magnitude * 10 + digit;
  if (at == digits || digits[0] == '0' || end - at < 2 || at[0] != '\r' || at[1] != '\n')
    return nullptr;
  const auto signed_magnitude = static_cast<long long>(magnitude);
  value = negative ? -signed_magnitude : signed_magnitude;
  return at + 2;
}

}  // namespace

redisReader* new_reply_reader(ReplyTally& tally) {
  static redisReplyObjectFunctions builders = counting_builders();
  redisReader* reader = redisReaderCreateWithFunctions(&builders);
  tally = {};
  if (reader != nullptr)
    reader->privdata = &tally;
  return reader;
}

bool scan_integer_reply(std::string_view text, IntegerReply& reply) {
  const char* at = text.data();
  const char* end = at + text.size();
  reply.array = false;
  reply.count = 1;
  if (at != end && *at == '*') {
    // "*<1-4>\r\n": arrays of other sizes (and nil, "*-1") are hiredis'.
    if (end - at < 4 || at[1] < '1' || at[1] > '4' || at[2] != '\r' || at[3] != '\n')
      return false;
    reply.array = true;
    reply.count = static_cast<size_t>(at[1] - '0');
    at += 4;
  }
  for (size_t i = 0; i < reply.count; ++i) {
    at = scan_integer(at, end, reply.values[i]);
    if (at == nullptr)
      return false;
  }
  reply.length = static_cast<size_t>(at - text.data());
  return true;
}

ReplyReader::ReplyReader() : reader_(new_reply_reader(tally_)) {
  if (reader_ == nullptr)
    throw std::bad_alloc();
}

ReplyReader::~ReplyReader() {
  redisReaderFree(reader_);
}

// hiredis holds no byte of a reply: every byte fed is read, and no reply is begun. A call that
// found no reply leaves the first task set up with no type read (read.h: ridx 0, type -1).
bool ReplyReader::hiredis_idle() const {
  const bool begun = reader_->ridx > 0 || (reader_->ridx == 0 && reader_->rstack[0].type >= 0);
  return reader_->err == 0 && reader_->pos == reader_->len && !begun;
}

void ReplyReader::feed(const char* data, size_t size) {
  if (scan_from_ < scan_.size() || hiredis_idle()) {
    if (scan_from_ == scan_.size()) {
      scan_.clear();
      scan_from_ = 0;
    }
    scan_.append(data, size);
    return;
  }
  redisReaderFeed(reader_, data, size);
}

ReplyReader::Status ReplyReader::next(ReplyPtr& reply) {
  if (scan_from_ < scan_.size()) {
    const std::string_view rest(scan_.data() + scan_from_, scan_.size() - scan_from_);
    if (IntegerReply scanned; scan_integer_reply(rest, scanned)) {
      scan_from_ += scanned.length;
      ++scanned_;
      reply = ReplyPtr(pooled_integers(scanned.values, scanned.count, scanned.array));
      if (!reply) {
        out_of_memory_ = true;
        return Status::error;
      }
      return Status::reply;
    }
    // Anything else, and all after it, is hiredis' to read.
    redisReaderFeed(reader_, rest.data(), rest.size());
    scan_.clear();
    scan_from_ = 0;
  }
  void* raw = nullptr;
  if (redisReaderGetReply(reader_, &raw) != REDIS_OK)
    return Status::error;
  if (raw == nullptr)
    return Status::more;
  reply = ReplyPtr(static_cast<redisReply*>(raw));
  return Status::reply;
}

std::string ReplyReader::error() const {
  if (out_of_memory_)
    return "out of memory";
  return reader_->errstr;
}

size_t ReplyReader::buffered() const {
  return (reader_->len - reader_->pos) + (scan_.size() - scan_from_);
}

}  // namespace rlcheck::redis
