#include <doctest/doctest.h>

#include "redis/cluster_slots.hpp"
#include "reply_builder.hpp"

using rlcheck::redis::crc16;
using rlcheck::redis::is_crossslot;
using rlcheck::redis::is_retry_later;
using rlcheck::redis::key_slot;
using rlcheck::redis::NodeAddress;
using rlcheck::redis::parse_redirect;
using rlcheck::redis::Redirect;
using rlcheck::redis::SlotMap;
using rlcheck::test::ReplyBuilder;

namespace {

// One CLUSTER SLOTS entry as Redis 7 sends it: range, master (host, port, id, metadata), and
// one replica that must not be taken for a master.
redisReply& entry(ReplyBuilder& b, long long first, long long last, std::string_view host,
                  long long port) {
  return b.array({&b.integer(first), &b.integer(last),
                  &b.array({&b.string(host), &b.integer(port), &b.string("id"), &b.array({})}),
                  &b.array({&b.string("10.9.9.9"), &b.integer(9999), &b.string("replica")})});
}

}  // namespace

TEST_CASE("crc16 is the XMODEM checksum of the Cluster specification") {
  CHECK(crc16("123456789") == 0x31C3);
  CHECK(crc16("") == 0);
}

TEST_CASE("key_slot hashes the whole key without a hash tag") {
  CHECK(key_slot("foo") == 12182);
  CHECK(key_slot("bar") == 5061);
  CHECK(key_slot("") == 0);
}

TEST_CASE("key_slot hashes only a non-empty hash tag") {
  CHECK(key_slot("{user1000}.following") == key_slot("{user1000}.followers"));
  CHECK(key_slot("{user1000}.following") == key_slot("user1000"));
  CHECK(key_slot("foo{}{bar}") == crc16("foo{}{bar}") % 16384);
  CHECK(key_slot("foo{{bar}}zap") == crc16("{bar") % 16384);
  CHECK(key_slot("foo{bar}{zap}") == key_slot("bar"));
  CHECK(key_slot("foo{bar") == crc16("foo{bar") % 16384);
  CHECK(key_slot("}foo{bar}") == key_slot("bar"));
}

TEST_CASE("NodeAddress names itself host:port") {
  CHECK(NodeAddress{"127.0.0.1", 7000}.name() == "127.0.0.1:7000");
  CHECK(NodeAddress{"::1", 7000}.name() == "::1:7000");
  CHECK(NodeAddress{"a", 1} == NodeAddress{"a", 1});
  CHECK_FALSE(NodeAddress{"a", 1} == NodeAddress{"a", 2});
}

TEST_CASE("SlotMap reads CLUSTER SLOTS: masters in order, replicas ignored") {
  ReplyBuilder b;
  const redisReply& reply =
      b.array({&entry(b, 0, 5460, "10.0.0.1", 7000), &entry(b, 10923, 16383, "10.0.0.3", 7002),
               &entry(b, 5461, 10922, "10.0.0.2", 7001)});
  auto map = SlotMap::from_cluster_slots(reply, "seed");
  REQUIRE(map.has_value());
  REQUIRE(map->masters().size() == 3);
  CHECK(map->masters()[0] == NodeAddress{"10.0.0.1", 7000});
  CHECK(map->masters()[1] == NodeAddress{"10.0.0.3", 7002});
  CHECK(map->masters()[2] == NodeAddress{"10.0.0.2", 7001});
  CHECK(map->master_index(0) == 0);
  CHECK(map->master_index(5460) == 0);
  CHECK(map->master_index(5461) == 2);
  CHECK(map->master_index(16383) == 1);
  CHECK(map->master_of(key_slot("foo")) == NodeAddress{"10.0.0.3", 7002});
  CHECK(map->covered());
}

TEST_CASE("SlotMap: one master with several ranges is listed once") {
  ReplyBuilder b;
  const redisReply& reply = b.array(
      {&entry(b, 0, 99, "h", 1), &entry(b, 100, 16283, "g", 2), &entry(b, 16284, 16383, "h", 1)});
  auto map = SlotMap::from_cluster_slots(reply, "seed");
  REQUIRE(map.has_value());
  CHECK(map->masters().size() == 2);
  CHECK(map->master_index(16383) == map->master_index(0));
}

TEST_CASE("SlotMap: an empty host is the node that answered") {
  ReplyBuilder b;
  const redisReply& reply = b.array({&entry(b, 0, 16383, "", 7000)});
  auto map = SlotMap::from_cluster_slots(reply, "10.1.1.1");
  REQUIRE(map.has_value());
  CHECK(map->master_of(42) == NodeAddress{"10.1.1.1", 7000});
}

TEST_CASE("SlotMap: unassigned slots have no master and the map is not covered") {
  ReplyBuilder b;
  const redisReply& reply = b.array({&entry(b, 0, 100, "h", 1)});
  auto map = SlotMap::from_cluster_slots(reply, "seed");
  REQUIRE(map.has_value());
  CHECK(map->master_index(101) == -1);
  CHECK_FALSE(map->master_of(101).has_value());
  CHECK_FALSE(map->covered());

  auto empty = SlotMap::from_cluster_slots(b.array({}), "seed");
  REQUIRE(empty.has_value());
  CHECK(empty->masters().empty());
  CHECK(empty->master_index(0) == -1);
}

TEST_CASE("SlotMap::assign moves one slot, adding a master when new") {
  ReplyBuilder b;
  const redisReply& reply = b.array({&entry(b, 0, 8191, "a", 1), &entry(b, 8192, 16383, "b", 2)});
  auto map = SlotMap::from_cluster_slots(reply, "seed");
  REQUIRE(map.has_value());

  CHECK(map->assign(10, NodeAddress{"b", 2}) == 1);
  CHECK(map->master_index(10) == 1);
  CHECK(map->master_index(11) == 0);

  CHECK(map->assign(11, NodeAddress{"c", 3}) == 2);
  CHECK(map->masters().size() == 3);
  CHECK(map->master_of(11) == NodeAddress{"c", 3});
  CHECK(map->covered());
  CHECK(map->assign(16384, NodeAddress{"c", 3}) == -1);
}

TEST_CASE("SlotMap: malformed CLUSTER SLOTS replies are errors that say what is wrong") {
  ReplyBuilder b;
  auto error_of = [](const redisReply& reply) {
    auto map = SlotMap::from_cluster_slots(reply, "seed");
    REQUIRE_FALSE(map.has_value());
    return map.error();
  };
  CHECK(error_of(b.error("ERR This instance has cluster support disabled")) ==
        "CLUSTER SLOTS: ERR This instance has cluster support disabled");
  CHECK(error_of(b.string("x")) == "CLUSTER SLOTS: the reply is not an array");
  CHECK(error_of(b.array({&b.integer(1)})) ==
        "CLUSTER SLOTS: entry 1: not an array of start, end and master");
  CHECK(error_of(b.array({&b.array({&b.integer(0), &b.integer(1)})})) ==
        "CLUSTER SLOTS: entry 1: not an array of start, end and master");
  CHECK(error_of(b.array({&b.array(
            {&b.string("0"), &b.integer(1), &b.array({&b.string("h"), &b.integer(1)})})})) ==
        "CLUSTER SLOTS: entry 1: the slot range is not two integers");
  CHECK(error_of(b.array({&entry(b, 0, 10, "h", 1), &entry(b, 9000, 100, "h", 1)})) ==
        "CLUSTER SLOTS: entry 2: slot range 9000-100 is not within 0-16383");
  CHECK(error_of(b.array({&entry(b, 0, 16384, "h", 1)})) ==
        "CLUSTER SLOTS: entry 1: slot range 0-16384 is not within 0-16383");
  CHECK(error_of(b.array({&entry(b, -1, 5, "h", 1)})) ==
        "CLUSTER SLOTS: entry 1: slot range -1-5 is not within 0-16383");
  CHECK(error_of(b.array({&b.array({&b.integer(0), &b.integer(1), &b.string("h:1")})})) ==
        "CLUSTER SLOTS: entry 1: the master is not an array of host and port");
  CHECK(error_of(b.array({&b.array({&b.integer(0), &b.integer(1), &b.array({&b.string("h")})})})) ==
        "CLUSTER SLOTS: entry 1: the master is not an array of host and port");
  CHECK(error_of(b.array({&b.array(
            {&b.integer(0), &b.integer(1), &b.array({&b.integer(5), &b.integer(1)})})})) ==
        "CLUSTER SLOTS: entry 1: the master's host is not a string");
  CHECK(error_of(b.array({&b.array(
            {&b.integer(0), &b.integer(1), &b.array({&b.string("h"), &b.string("7000")})})})) ==
        "CLUSTER SLOTS: entry 1: the master's port is not an integer");
  CHECK(error_of(b.array({&entry(b, 0, 1, "h", 0)})) ==
        "CLUSTER SLOTS: entry 1: the master's port 0 is not within 1-65535");
  CHECK(error_of(b.array({&entry(b, 0, 1, "h", 70000)})) ==
        "CLUSTER SLOTS: entry 1: the master's port 70000 is not within 1-65535");
  CHECK(error_of(b.array({&entry(b, 0, 1, "?", 7000)})) ==
        "CLUSTER SLOTS: entry 1: the master's endpoint is unknown ('?')");
}

TEST_CASE("parse_redirect reads MOVED and ASK") {
  auto moved = parse_redirect("MOVED 15549 127.0.0.1:7003");
  REQUIRE(moved.has_value());
  CHECK(moved->kind == Redirect::Kind::moved);
  CHECK(moved->slot == 15549);
  CHECK(moved->to == NodeAddress{"127.0.0.1", 7003});

  auto ask = parse_redirect("ASK 3999 127.0.0.1:6381");
  REQUIRE(ask.has_value());
  CHECK(ask->kind == Redirect::Kind::ask);
  CHECK(ask->slot == 3999);
  CHECK(ask->to == NodeAddress{"127.0.0.1", 6381});
}

TEST_CASE("parse_redirect takes the port after the last colon") {
  auto ipv6 = parse_redirect("MOVED 1 ::1:7000");
  REQUIRE(ipv6.has_value());
  CHECK(ipv6->to == NodeAddress{"::1", 7000});

  auto no_host = parse_redirect("MOVED 1 :7000");
  REQUIRE(no_host.has_value());
  CHECK(no_host->to == NodeAddress{"", 7000});
}

TEST_CASE("parse_redirect refuses anything else") {
  CHECK_FALSE(parse_redirect("").has_value());
  CHECK_FALSE(parse_redirect("ERR unknown command").has_value());
  CHECK_FALSE(parse_redirect("MOVEDX 1 h:1").has_value());
  CHECK_FALSE(parse_redirect("MOVED").has_value());
  CHECK_FALSE(parse_redirect("MOVED 1").has_value());
  CHECK_FALSE(parse_redirect("MOVED x h:1").has_value());
  CHECK_FALSE(parse_redirect("MOVED 16384 h:1").has_value());
  CHECK_FALSE(parse_redirect("MOVED -1 h:1").has_value());
  CHECK_FALSE(parse_redirect("MOVED 1 h").has_value());
  CHECK_FALSE(parse_redirect("MOVED 1 h:").has_value());
  CHECK_FALSE(parse_redirect("MOVED 1 h:0").has_value());
  CHECK_FALSE(parse_redirect("MOVED 1 h:65536").has_value());
  CHECK_FALSE(parse_redirect("MOVED 1 h:7x").has_value());
  CHECK_FALSE(parse_redirect("ASK 1 h:1 extra").has_value());
  CHECK_FALSE(parse_redirect("-MOVED 1 h:1").has_value());
}

TEST_CASE("is_retry_later: TRYAGAIN and CLUSTERDOWN") {
  CHECK(is_retry_later("TRYAGAIN Multiple keys request during rehashing of slot"));
  CHECK(is_retry_later("CLUSTERDOWN The cluster is down"));
  CHECK(is_retry_later("CLUSTERDOWN Hash slot not served"));
  CHECK_FALSE(is_retry_later("MOVED 1 h:1"));
  CHECK_FALSE(is_retry_later("ERR TRYAGAIN"));
  CHECK_FALSE(is_retry_later("CLUSTERDOWNX"));
  CHECK_FALSE(is_retry_later(""));
}

TEST_CASE("is_crossslot: CROSSSLOT and the scripts' slot errors") {
  CHECK(is_crossslot("CROSSSLOT Keys in request don't hash to the same slot"));
  CHECK(
      is_crossslot("ERR Script attempted to access keys that do not hash to the same slot script: "
                   "58fb06f8bc73c7e873b9c70957c0f5aed76f29d5, on @user_script:2."));
  CHECK(
      is_crossslot("ERR Script attempted to access a non local key in a cluster node script: "
                   "af698583a57f354c072db756dc2ab9506d472edf, on @user_script:2."));
  CHECK(is_crossslot("ERR Script attempted to access a non local key in a cluster node"));
  CHECK_FALSE(is_crossslot("MOVED 12182 127.0.0.1:7002"));
  CHECK_FALSE(
      is_crossslot("ERR user_script:1: Script attempted to access nonexistent global "
                   "variable 'x' script: 0123, on @user_script:1."));
  CHECK_FALSE(is_crossslot("TRYAGAIN Multiple keys request during rehashing of slot"));
}
