#pragma once
// Replies read off a connection's bytes. hiredis' reader reads every reply; the shapes limiters
// answer with nearly always (an integer, or an array of at most four integers) are read first
// by a scanner of their own, which hands hiredis everything else, and the rest of the input
// with it, so the two never read the same bytes. Both build pooled replies (reply_pool.hpp).

#include <cstddef>
#include <string>
#include <string_view>

#include "redis/reply.hpp"

struct redisReader;

namespace rlcheck::redis {

// What rlcheck keeps of one reply: its bytes (buffered while it arrives, and its strings once
// parsed) and its array elements, all nested levels together. hiredis itself refuses nesting
// deeper than 7 levels. Past a cap the connection is lost with LossCause::too_large.
inline constexpr size_t k_max_reply_bytes = 16 * 1024 * 1024;
inline constexpr size_t k_max_reply_elements = 256 * 1024;

// The reply being parsed: what it holds so far, against the caps; reset per reply.
struct ReplyTally {
  size_t bytes = 0;
  size_t elements = 0;
  bool over_cap = false;
};

// A reader as the connections use: pooled replies (reply_pool.hpp), counted into `tally`
// against the caps, freed with ReplyFree.
redisReader* new_reply_reader(ReplyTally& tally);

// An integer reply, or an array of at most four integers, as the scanner read it.
struct IntegerReply {
  static constexpr size_t k_most_elements = 4;
  bool array = false;
  size_t count = 0;  // elements of the array; 1 for an integer
  long long values[k_most_elements] = {};
  size_t length = 0;  // the bytes it took
};

// Reads into `reply` the reply at the start of `text` when it is an integer (":-12\r\n") or an
// array of at most four of them ("*3\r\n:1\r\n:9\r\n:0\r\n"), each of at most 18 digits, whole;
// false (and `reply` unspecified) when the text starts with anything else or stops before the
// reply ends. Written in place: a reply returned by value was copied in 16-byte moves from the
// 8-byte stores that had just written it, which the store buffer cannot forward.
bool scan_integer_reply(std::string_view text, IntegerReply& reply);

class ReplyReader {
 public:
  ReplyReader();
  ~ReplyReader();
  ReplyReader(const ReplyReader&) = delete;
  ReplyReader& operator=(const ReplyReader&) = delete;

  void feed(const char* data, size_t size);
  enum class Status { reply, more, error };
  // The next complete reply into `reply` (Status::reply); `more` when the bytes fed so far
  // hold none; `error` on a protocol error or a reply over the caps (over_cap()).
  Status next(ReplyPtr& reply);
  bool over_cap() const { return tally_.over_cap; }
  std::string error() const;
  // Bytes fed and not yet read into a reply.
  size_t buffered() const;
  // How many replies the scanner read (the rest were hiredis').
  size_t scanned() const { return scanned_; }

 private:
  bool hiredis_idle() const;

  redisReader* reader_;
  ReplyTally tally_;
  std::string scan_;      // bytes for the scanner; hiredis holds none while it has some
  size_t scan_from_ = 0;  // the first not read
  bool out_of_memory_ = false;
  size_t scanned_ = 0;
};

}  // namespace rlcheck::redis
