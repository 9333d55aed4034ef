// The cluster building blocks against a real 3-master Redis Cluster: the slot map and key
// slots agree with the servers, redirects and script slot errors read as the servers send
// them, and a slot moves with its keys while a client keeps writing to it.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "provision/embedded_cluster.hpp"
#include "redis/cluster_slots.hpp"
#include "support/test_cluster.hpp"

using rlcheck::provision::EmbeddedCluster;
using rlcheck::redis::is_crossslot;
using rlcheck::redis::key_slot;
using rlcheck::redis::NodeAddress;
using rlcheck::redis::parse_redirect;
using rlcheck::redis::Redirect;
using rlcheck::redis::ReplyPtr;
using rlcheck::redis::SyncClient;
using rlcheck::testing::TestCluster;

namespace {

std::string text_of(const ReplyPtr& reply) {
  return std::string(reply->str, reply->len);
}

ReplyPtr call(SyncClient& client, std::initializer_list<std::string_view> argv) {
  auto reply = client.call(argv);
  REQUIRE_MESSAGE(reply.has_value(), (reply ? "" : reply.error()));
  return std::move(*reply);
}

// A master other than `node`.
NodeAddress other_master(const NodeAddress& node) {
  const auto map = TestCluster::shared().slot_map();
  for (const NodeAddress& master : map.masters()) {
    if (master != node)
      return master;
  }
  FAIL("the cluster has a single master");
  return node;
}

// The first key named `prefix`N whose master and slot relate to `key` as asked.
std::string key_where(std::string_view prefix, std::string_view key, bool same_master) {
  const auto map = TestCluster::shared().slot_map();
  const int master = map.master_index(key_slot(key));
  for (int i = 0; i < 10000; ++i) {
    std::string candidate = fmt::format("{}{}", prefix, i);
    if (key_slot(candidate) != key_slot(key) &&
        (map.master_index(key_slot(candidate)) == master) == same_master)
      return candidate;
  }
  FAIL("no such key");
  return {};
}

// INCRs keys of the cluster the way a cluster client must: MOVED switches node, ASK sends
// ASKING and the command to the node named, TRYAGAIN tries again.
class RedirectFollowingWriter {
 public:
  explicit RedirectFollowingWriter(NodeAddress start)
      : node_(std::move(start)), client_(TestCluster::shared().connect(node_)) {}

  // True once the INCR is done; false when a reply was neither a number nor a redirect.
  bool incr(const std::string& key) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto reply = client_.call({"INCR", key});
      if (!reply)
        return false;
      if ((*reply)->type == REDIS_REPLY_INTEGER)
        return true;
      if ((*reply)->type != REDIS_REPLY_ERROR)
        return false;
      const std::string error = text_of(*reply);
      const auto redirect = parse_redirect(error);
      if (redirect && redirect->kind == Redirect::Kind::moved) {
        node_ = redirect->to;
        client_ = TestCluster::shared().connect(node_);
      } else if (redirect) {
        SyncClient asked = TestCluster::shared().connect(redirect->to);
        auto asking = asked.call({"ASKING"});
        auto answer = asked.call({"INCR", key});
        if (asking && answer && (*answer)->type == REDIS_REPLY_INTEGER)
          return true;
      } else if (!rlcheck::redis::is_retry_later(error)) {
        last_error_ = error;
        return false;
      }
    }
    return false;
  }
  const std::string& last_error() const { return last_error_; }

 private:
  NodeAddress node_;
  SyncClient client_;
  std::string last_error_;
};

}  // namespace

TEST_SUITE("cluster support") {
  TEST_CASE("the shared cluster has 3 masters serving every slot") {
    TestCluster& cluster = TestCluster::shared();
    const auto map = cluster.slot_map();
    CHECK(map.covered());
    REQUIRE(map.masters().size() == 3);
    REQUIRE(cluster.endpoints().size() == 3);
    for (const auto& endpoint : cluster.endpoints()) {
      const NodeAddress node{endpoint.host, endpoint.port};
      CHECK(std::ranges::find(map.masters(), node) != map.masters().end());
    }
    CHECK(map.master_of(0) ==
          NodeAddress{cluster.seed_endpoint().host, cluster.seed_endpoint().port});
    for (const auto& master : map.masters()) {
      SyncClient client = cluster.connect(master);
      CHECK(text_of(call(client, {"CLUSTER", "INFO"})).find("cluster_state:ok") !=
            std::string::npos);
    }
  }

  TEST_CASE("a key's master by key_slot takes it; another master redirects there") {
    TestCluster& cluster = TestCluster::shared();
    const std::string key = "rlcheck-test:routing";
    const NodeAddress master = cluster.master_of(key);

    SyncClient owner = cluster.connect(master);
    const ReplyPtr set = call(owner, {"SET", key, "v1"});
    REQUIRE(set->type == REDIS_REPLY_STATUS);
    CHECK(text_of(set) == "OK");
    CHECK(call(owner, {"CLUSTER", "KEYSLOT", key})->integer == key_slot(key));

    SyncClient elsewhere = cluster.connect(other_master(master));
    const ReplyPtr moved = call(elsewhere, {"SET", key, "v2"});
    REQUIRE(moved->type == REDIS_REPLY_ERROR);
    const auto redirect = parse_redirect(text_of(moved));
    REQUIRE(redirect.has_value());
    CHECK(redirect->kind == Redirect::Kind::moved);
    CHECK(redirect->slot == key_slot(key));
    CHECK(redirect->to == master);
    CHECK(text_of(call(owner, {"GET", key})) == "v1");
  }

  TEST_CASE("migrate_slot moves a slot and its key; the old owner then redirects") {
    TestCluster& cluster = TestCluster::shared();
    const std::string key = "rlcheck-test:migrated";
    const NodeAddress from = cluster.master_of(key);
    const NodeAddress to = other_master(from);
    SyncClient source = cluster.connect(from);
    REQUIRE(text_of(call(source, {"SET", key, "kept", "EX", "600"})) == "OK");

    cluster.migrate_slot(key_slot(key), to);

    CHECK(cluster.master_of(key) == to);
    SyncClient target = cluster.connect(to);
    CHECK(text_of(call(target, {"GET", key})) == "kept");
    CHECK(call(target, {"TTL", key})->integer > 0);
    const ReplyPtr old = call(source, {"GET", key});
    REQUIRE(old->type == REDIS_REPLY_ERROR);
    const auto redirect = parse_redirect(text_of(old));
    REQUIRE(redirect.has_value());
    CHECK(redirect->kind == Redirect::Kind::moved);
    CHECK(redirect->to == to);
  }

  TEST_CASE("migrate_slot loses no write made while it runs") {
    TestCluster& cluster = TestCluster::shared();
    // Keys of one slot (one hash tag), some existing before the move and some created during.
    std::vector<std::string> keys;
    for (int i = 0; i < 40; ++i)
      keys.push_back(fmt::format("rlcheck-test:{{busy}}:{}", i));
    const uint16_t slot = key_slot(keys.front());
    const NodeAddress from = cluster.master_of(keys.front());
    const NodeAddress to = other_master(from);
    {
      SyncClient source = cluster.connect(from);
      for (size_t i = 0; i < keys.size(); i += 2)
        REQUIRE(call(source, {"SET", keys[i], "0"})->type == REDIS_REPLY_STATUS);
    }

    std::atomic<bool> moved{false};
    std::map<std::string, long long> written;
    std::string writer_error;
    std::thread writer([&] {
      try {
        RedirectFollowingWriter client(from);
        // Goes on until the move is done, then a round more so writes reach the new owner.
        for (int after = 0; after < 2;) {
          if (moved.load())
            ++after;
          for (const std::string& key : keys) {
            if (!client.incr(key)) {
              writer_error = client.last_error().empty() ? "no reply" : client.last_error();
              return;
            }
            ++written[key];
          }
        }
      } catch (const std::exception& error) {
        writer_error = error.what();
      }
    });
    std::string migrate_error;
    try {
      cluster.migrate_slot(slot, to);
    } catch (const std::exception& error) {
      migrate_error = error.what();
    }
    moved.store(true);
    writer.join();

    REQUIRE_MESSAGE(migrate_error.empty(), migrate_error);
    REQUIRE_MESSAGE(writer_error.empty(), writer_error);
    CHECK(cluster.master_of(keys.front()) == to);
    SyncClient target = cluster.connect(to);
    for (const std::string& key : keys) {
      const ReplyPtr value = call(target, {"GET", key});
      REQUIRE(value->type == REDIS_REPLY_STRING);
      CHECK_MESSAGE(std::stoll(text_of(value)) == written[key], key);
    }
  }

  TEST_CASE("a script touching an undeclared key of another slot is a crossslot error") {
    TestCluster& cluster = TestCluster::shared();
    const std::string declared = "rlcheck-test:script";
    SyncClient owner = cluster.connect_to_master_of(declared);

    // On another master: Redis refuses any script (with or without a #! line).
    const std::string remote = key_where("rlcheck-test:remote:", declared, false);
    const ReplyPtr non_local =
        call(owner, {"EVAL", "redis.call('SET', KEYS[1], 1) return redis.call('INCR', ARGV[1])",
                     "1", declared, remote});
    REQUIRE(non_local->type == REDIS_REPLY_ERROR);
    CHECK_MESSAGE(is_crossslot(text_of(non_local)), text_of(non_local));

    // On the same master but another slot: refused for a script with a #! line.
    const std::string local = key_where("rlcheck-test:local:", declared, true);
    const ReplyPtr other_slot = call(
        owner, {"EVAL", "#!lua\nredis.call('SET', KEYS[1], 1) return redis.call('INCR', ARGV[1])",
                "1", declared, local});
    REQUIRE(other_slot->type == REDIS_REPLY_ERROR);
    CHECK_MESSAGE(is_crossslot(text_of(other_slot)), text_of(other_slot));
  }

  TEST_CASE("EVAL declaring two keys of different slots is CROSSSLOT") {
    TestCluster& cluster = TestCluster::shared();
    const std::string first = "rlcheck-test:pair";
    const std::string second = key_where("rlcheck-test:pair:", first, true);
    SyncClient owner = cluster.connect_to_master_of(first);
    const ReplyPtr reply =
        call(owner, {"EVAL", "return redis.call('GET', KEYS[1])", "2", first, second});
    REQUIRE(reply->type == REDIS_REPLY_ERROR);
    CHECK(text_of(reply).starts_with("CROSSSLOT"));
    CHECK(is_crossslot(text_of(reply)));
  }

  TEST_CASE("EmbeddedCluster says why it could not start") {
    auto no_binary = EmbeddedCluster::start("/nonexistent/redis-server", 3);
    REQUIRE_FALSE(no_binary.has_value());
    CHECK(no_binary.error() == "cannot start /nonexistent/redis-server: No such file or directory");

    auto exits = EmbeddedCluster::start("/bin/false", 3);
    REQUIRE_FALSE(exits.has_value());
    CHECK(exits.error() == "/bin/false exited: no log");

    auto none = EmbeddedCluster::start("/bin/false", 0);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error() == "a cluster needs at least 1 master, not 0");
  }
}
