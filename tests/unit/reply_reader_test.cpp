// The connection's reply reader: its integer scanner, and the replies it reads against what
// hiredis' reader alone reads from the same bytes, however they are split into reads.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include <hiredis/hiredis.h>

#include "hiredis_replies.hpp"
#include "redis/reply.hpp"
#include "redis/reply_reader.hpp"

using rlcheck::redis::IntegerReply;
using rlcheck::redis::ReplyPtr;
using rlcheck::redis::ReplyReader;
using rlcheck::redis::scan_integer_reply;
using rlcheck::test::hiredis_replies;

namespace {

// What a ReplyReader reads from `bytes` fed as two reads, split at `split`.
std::vector<ReplyPtr> reader_replies(std::string_view bytes, size_t split, bool& error) {
  ReplyReader reader;
  std::vector<ReplyPtr> replies;
  error = false;
  for (std::string_view part : {bytes.substr(0, split), bytes.substr(split)}) {
    reader.feed(part.data(), part.size());
    for (;;) {
      ReplyPtr reply;
      const auto status = reader.next(reply);
      if (status == ReplyReader::Status::error) {
        error = true;
        return replies;
      }
      if (status == ReplyReader::Status::more)
        break;
      replies.push_back(std::move(reply));
    }
  }
  return replies;
}

void check_same_as_hiredis(std::string_view bytes) {
  bool hiredis_error = false;
  const auto expected = hiredis_replies(bytes, &hiredis_error);
  for (size_t split = 0; split <= bytes.size(); ++split) {
    CAPTURE(split);
    bool error = false;
    const auto read = reader_replies(bytes, split, error);
    CHECK(error == hiredis_error);
    REQUIRE(read.size() == expected.size());
    for (size_t i = 0; i < read.size(); ++i)
      CHECK(rlcheck::redis::same_reply(read[i].get(), expected[i].get()));
  }
}

}  // namespace

TEST_CASE("the scanner reads integers and short arrays of integers, whole, and nothing else") {
  IntegerReply batch;
  REQUIRE(scan_integer_reply("*3\r\n:0\r\n:-7\r\n:59321\r\n:1\r\n", batch));
  CHECK(batch.array);
  CHECK(batch.count == 3);
  CHECK(batch.values[1] == -7);
  CHECK(batch.values[2] == 59321);
  CHECK(batch.length == 21);
  IntegerReply single;
  REQUIRE(scan_integer_reply(":123456789012345678\r\n", single));
  CHECK_FALSE(single.array);
  CHECK(single.count == 1);
  CHECK(single.values[0] == 123456789012345678);
  // The same object, reused: an integer after an array is not an array.
  REQUIRE(scan_integer_reply(":0\r\n", batch));
  CHECK_FALSE(batch.array);
  CHECK(batch.count == 1);
  CHECK(batch.values[0] == 0);
  // What hiredis refuses (leading zeros, "-0") or reads itself (19 digits, +3) is not scanned.
  for (std::string_view other :
       {":1234567890123456789\r\n", ":+3\r\n", ":1x\r\n", ":\r\n", ":-\r\n", ":0617283\r\n",
        ":-0\r\n", ":00\r\n", "*0\r\n", "*-1\r\n", "*5\r\n:1\r\n:1\r\n:1\r\n:1\r\n:1\r\n",
        "*2\r\n:1\r\n$1\r\na\r\n", "+OK\r\n", "*3\r\n:1\r\n:2\r\n", ":12\r", ""}) {
    CAPTURE(other);
    IntegerReply scanned;
    CHECK_FALSE(scan_integer_reply(other, scanned));
  }
}

TEST_CASE("the reply reader reads what hiredis reads, however the bytes are split") {
  // A pipelined batch of limiter replies, then the shapes hiredis reads, then integers again.
  check_same_as_hiredis(
      "*3\r\n:1\r\n:9\r\n:0\r\n*3\r\n:0\r\n:0\r\n:59321\r\n:-2\r\n$3\r\nabc\r\n*2\r\n:1\r\n+OK\r\n"
      "-NOSCRIPT No matching "
      "script\r\n*4\r\n:1\r\n:2\r\n:3\r\n:4\r\n*-1\r\n:1234567890123456789\r\n"
      "*1\r\n*1\r\n:5\r\n:0\r\n");
  // A protocol error after scanned replies stops the reader there, as it stops hiredis.
  check_same_as_hiredis("*3\r\n:1\r\n:9\r\n:0\r\n:7\r\n!oops\r\n:1\r\n");
  check_same_as_hiredis(":1x\r\n:2\r\n");
  check_same_as_hiredis(":0\r\n:0617283\r\n");
  check_same_as_hiredis("*2\r\n:-0\r\n:1\r\n");
}

TEST_CASE("a connection's replies after its login are the scanner's until one is not an integer") {
  ReplyReader reader;
  const std::string_view login = "+OK\r\n";
  reader.feed(login.data(), login.size());
  std::vector<ReplyPtr> replies;
  ReplyPtr reply;
  while (reader.next(reply) == ReplyReader::Status::reply)
    replies.push_back(std::move(reply));
  CHECK(reader.scanned() == 0);
  // A pipelined batch, split inside its third reply: the rest of that read and the next are
  // hiredis', the reads after them the scanner's again.
  const std::string batch = "*3\r\n:1\r\n:9\r\n:0\r\n*3\r\n:0\r\n:0\r\n:1500\r\n*3\r\n:0";
  const std::string rest = "\r\n:0\r\n:1499\r\n";
  const std::string next = "*3\r\n:0\r\n:0\r\n:1498\r\n$2\r\nok\r\n:4\r\n";
  for (const std::string& read : {batch, rest, next}) {
    reader.feed(read.data(), read.size());
    while (reader.next(reply) == ReplyReader::Status::reply)
      replies.push_back(std::move(reply));
  }
  REQUIRE(replies.size() == 7);
  CHECK(replies[3]->element[2]->integer == 1499);
  CHECK(replies[6]->integer == 4);
  CHECK(reader.scanned() == 3);  // the batch's first two, and the third read's first
  CHECK(reader.buffered() == 0);
}
