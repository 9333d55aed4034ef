// The virtual clock's cursors: every request once, each identity's in order on one client.
// Their instants are the Schedule's (schedule_test.cpp).

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <vector>

#include "engine/virtual_schedule.hpp"

using namespace rlcheck;

namespace {

config::LoadConfig load_of(int64_t requests, int clients, int64_t identities) {
  config::LoadConfig load;
  load.requests = requests;
  load.concurrency = clients;
  load.identities = identities;
  load.rate = config::Rate{1, std::chrono::seconds(1)};
  return load;
}

// Every client's sequence, by client.
std::vector<std::vector<uint64_t>> walk(const config::LoadConfig& load) {
  std::vector<std::vector<uint64_t>> sent(static_cast<size_t>(load.concurrency));
  for (int client = 0; client < load.concurrency; ++client) {
    engine::IdentityCursor cursor(load, client);
    while (const auto seq = cursor.next())
      sent[static_cast<size_t>(client)].push_back(*seq);
  }
  return sent;
}

}  // namespace

TEST_CASE("IdentityCursor: every request once, ascending, each identity on one client") {
  struct Shape {
    int64_t requests;
    int clients;
    int64_t identities;
    uint64_t first_seq;
  };
  for (const Shape shape :
       {Shape{100, 1, 1, 0}, Shape{100, 4, 10, 0}, Shape{101, 10, 4, 0}, Shape{57, 3, 3, 0},
        Shape{1000, 50, 7, 13}, Shape{10, 8, 100, 5}, Shape{0, 2, 2, 0}}) {
    CAPTURE(shape.requests);
    CAPTURE(shape.clients);
    CAPTURE(shape.identities);
    config::LoadConfig load = load_of(shape.requests, shape.clients, shape.identities);
    load.first_seq = shape.first_seq;
    std::multiset<uint64_t> all;
    std::map<uint64_t, int> owner;  // identity -> client
    const auto sent = walk(load);
    for (size_t client = 0; client < sent.size(); ++client) {
      CHECK(std::is_sorted(sent[client].begin(), sent[client].end()));
      for (uint64_t seq : sent[client]) {
        all.insert(seq);
        const uint64_t identity = seq % static_cast<uint64_t>(shape.identities);
        const auto [it, fresh] = owner.emplace(identity, static_cast<int>(client));
        CHECK(it->second == static_cast<int>(client));
      }
      // Clients past min(clients, identities) own nothing.
      if (static_cast<int64_t>(client) >= std::min<int64_t>(shape.clients, shape.identities))
        CHECK(sent[client].empty());
    }
    REQUIRE(all.size() == static_cast<size_t>(shape.requests));
    uint64_t expected = shape.first_seq;
    for (uint64_t seq : all)
      CHECK(seq == expected++);
  }
}

TEST_CASE("IdentityCursor: identities spread evenly over the clients that own them") {
  const auto sent = walk(load_of(10'000, 200, 10'000));
  for (const auto& client : sent)
    CHECK(client.size() == 50);
}
