// IdentityMap: which identity each request speaks for under --identity-dist.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/identity_map.hpp"

using rlcheck::config::IdentityDist;
using rlcheck::config::IdentityShape;
using rlcheck::engine::IdentityMap;

namespace {

// How many of requests 0..n-1 each identity got.
std::vector<int64_t> shares(const IdentityMap& map, int64_t identities, uint64_t n) {
  std::vector<int64_t> count(static_cast<size_t>(identities), 0);
  for (uint64_t seq = 0; seq < n; ++seq) {
    const uint32_t identity = map.of(seq);
    REQUIRE(identity < count.size());
    ++count[identity];
  }
  return count;
}

}  // namespace

TEST_CASE("identity map: uniform is seq mod K, bit for bit, whatever the seed") {
  for (const int64_t k : {1, 2, 7, 10'000}) {
    const IdentityMap map(IdentityDist{}, k, 12345);
    for (uint64_t seq = 0; seq < 50'000; seq += 7)
      CHECK(map.of(seq) == seq % static_cast<uint64_t>(k));
    CHECK(map.of(UINT64_MAX) == UINT64_MAX % static_cast<uint64_t>(k));
  }
  CHECK(IdentityMap().of(99) == 0);
}

TEST_CASE("identity map: hot:0.3 gives identity 0 its share, the others the rest evenly") {
  constexpr int64_t k = 10;
  constexpr uint64_t n = 1'000'000;
  const std::vector<int64_t> count =
      shares(IdentityMap(IdentityDist{IdentityShape::hot, 0.3}, k, 7), k, n);
  CHECK(std::abs(static_cast<double>(count[0]) / n - 0.3) < 0.01);
  const double each = 0.7 / (k - 1);
  for (size_t id = 1; id < count.size(); ++id)
    CHECK(std::abs(static_cast<double>(count[id]) / n - each) < 0.1 * each);
}

TEST_CASE("identity map: zipf:1.1 over 10 identities follows 1/(k+1)^1.1") {
  constexpr int64_t k = 10;
  constexpr uint64_t n = 1'000'000;
  const std::vector<int64_t> count =
      shares(IdentityMap(IdentityDist{IdentityShape::zipf, 1.1}, k, 7), k, n);
  double total = 0;
  for (int64_t id = 0; id < k; ++id)
    total += std::pow(static_cast<double>(id + 1), -1.1);
  for (int64_t id = 0; id < k; ++id) {
    const double expected = std::pow(static_cast<double>(id + 1), -1.1) / total;
    const double got = static_cast<double>(count[static_cast<size_t>(id)]) / n;
    CHECK(std::abs(got - expected) < 0.05 * expected);
  }
  CHECK(count[0] > count[1]);
  CHECK(count[1] > count[9]);
}

TEST_CASE("identity map: a request's identity depends only on the seed and its number") {
  for (const IdentityDist dist :
       {IdentityDist{IdentityShape::hot, 0.5}, IdentityDist{IdentityShape::zipf, 1.1}}) {
    const IdentityMap a(dist, 100, 42);
    const IdentityMap b(dist, 100, 42);
    const IdentityMap other(dist, 100, 43);
    int differ = 0;
    // In any order: a worker asks for its own seqs only.
    for (uint64_t seq = 5000; seq-- > 0;) {
      CHECK(a.of(seq) == b.of(seq));
      CHECK(a.of(seq) < 100);
      differ += a.of(seq) != other.of(seq) ? 1 : 0;
    }
    CHECK(differ > 2500);  // another seed draws other identities
  }
}

TEST_CASE("identity map: only() and the load's only_identity speak for one identity") {
  CHECK(IdentityMap::only(7).of(0) == 7);
  CHECK(IdentityMap::only(7).of(123'456) == 7);
  rlcheck::config::LoadConfig load;
  load.identities = 10;
  load.identity_dist = {IdentityShape::zipf, 2};
  load.only_identity = 9;
  for (uint64_t seq = 0; seq < 100; ++seq)
    CHECK(rlcheck::engine::identity_map_of(load).of(seq) == 9);
  load.only_identity.reset();
  load.identity_dist = {};
  CHECK(rlcheck::engine::identity_map_of(load).of(13) == 3);
}
