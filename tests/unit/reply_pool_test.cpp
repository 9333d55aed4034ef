#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <hiredis/hiredis.h>

#include "hiredis_replies.hpp"
#include "redis/command_buffer.hpp"
#include "redis/connection.hpp"
#include "redis/reply.hpp"
#include "redis/reply_pool.hpp"

using rlcheck::redis::CommandBuffer;
using rlcheck::redis::ReplyPtr;
using rlcheck::test::hiredis_replies;

namespace {

std::string text_of(const redisReply* reply) {
  return std::string(reply->str, reply->len);
}

}  // namespace

TEST_CASE("pooled replies read as hiredis' own: every type, short and long, nested and wide") {
  const std::string long_text(300, 'x');
  const std::string resp = ":42\r\n$-1\r\n+OK\r\n-ERR bad\r\n$3\r\nabc\r\n$300\r\n" + long_text +
                           "\r\n*3\r\n:1\r\n:0\r\n:1500\r\n*6\r\n:1\r\n:2\r\n:3\r\n:4\r\n:5\r\n"
                           "$2\r\nsi\r\n*2\r\n*1\r\n$4\r\ndeep\r\n*0\r\n*-1\r\n";
  // Twice: the second reading reuses the blocks the first gave back.
  for (int pass = 0; pass < 2; ++pass) {
    CAPTURE(pass);
    const std::vector<ReplyPtr> replies = hiredis_replies(resp);
    REQUIRE(replies.size() == 10);
    CHECK(replies[0]->type == REDIS_REPLY_INTEGER);
    CHECK(replies[0]->integer == 42);
    CHECK(replies[1]->type == REDIS_REPLY_NIL);
    CHECK(replies[2]->type == REDIS_REPLY_STATUS);
    CHECK(text_of(replies[2].get()) == "OK");
    CHECK(replies[3]->type == REDIS_REPLY_ERROR);
    CHECK(text_of(replies[3].get()) == "ERR bad");
    CHECK(text_of(replies[4].get()) == "abc");
    CHECK(replies[4]->str[3] == '\0');
    CHECK(text_of(replies[5].get()) == long_text);
    REQUIRE(replies[6]->elements == 3);
    CHECK(replies[6]->element[2]->integer == 1500);
    REQUIRE(replies[7]->elements == 6);  // more elements than a block holds
    CHECK(replies[7]->element[4]->integer == 5);
    CHECK(text_of(replies[7]->element[5]) == "si");
    REQUIRE(replies[8]->elements == 2);
    REQUIRE(replies[8]->element[0]->elements == 1);
    CHECK(text_of(replies[8]->element[0]->element[0]) == "deep");
    CHECK(replies[8]->element[1]->elements == 0);
    CHECK(replies[9]->type == REDIS_REPLY_NIL);
  }
}

TEST_CASE("a reply cut by a protocol error is freed whole, and the reader says so") {
  bool failed = false;
  const std::vector<ReplyPtr> replies =
      hiredis_replies(":1\r\n*3\r\n:1\r\n$2\r\nab\r\n?oops\r\n", &failed);
  CHECK(failed);
  REQUIRE(replies.size() == 1);
  CHECK(replies[0]->integer == 1);
}

TEST_CASE("a command buffer writes RESP: several commands, empty and long arguments") {
  CommandBuffer buffer;
  buffer.begin(2);
  buffer.add("GET");
  buffer.add("");
  buffer.then(1);
  const std::string long_arg(1000, 'k');
  buffer.add(long_arg);
  CHECK(buffer.text() == "*2\r\n$3\r\nGET\r\n$0\r\n\r\n*1\r\n$1000\r\n" + long_arg + "\r\n");
  buffer.begin(1);
  buffer.add("PING");
  CHECK(buffer.text() == "*1\r\n$4\r\nPING\r\n");
}

TEST_CASE("an argument written in place is the one add() writes, whatever its length") {
  for (const size_t length :
       {size_t{0}, size_t{1}, size_t{9}, size_t{10}, size_t{99}, size_t{100}, size_t{128}}) {
    CAPTURE(length);
    const std::string arg(length, 'm');
    CommandBuffer added;
    added.begin(2);
    added.add("K");
    added.add(arg);
    CommandBuffer in_place;
    in_place.begin(2);
    in_place.add("K");
    const bool wrote = in_place.add_in_place(128, [&](char* at, size_t room) {
      CHECK(room == 128);
      std::copy(arg.begin(), arg.end(), at);
      return arg.size();
    });
    CHECK(wrote);
    CHECK(in_place.text() == added.text());
  }
}

TEST_CASE("an argument that does not fit in place leaves the buffer as it was") {
  CommandBuffer buffer;
  buffer.begin(2);
  buffer.add("K");
  const std::string before(buffer.text());
  CHECK_FALSE(buffer.add_in_place(16, [](char* at, size_t) {
    std::fill(at, at + 16, 'x');  // written, then disowned
    return std::string_view::npos;
  }));
  CHECK(buffer.text() == before);
  buffer.add("next");
  CHECK(buffer.text() == before + "$4\r\nnext\r\n");
}
