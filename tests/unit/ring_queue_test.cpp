#include <doctest/doctest.h>

#include <deque>
#include <string>

#include "base/ring_queue.hpp"

namespace rlcheck::base {

TEST_CASE("a ring queue keeps first-in first-out order while it wraps and grows") {
  RingQueue<int> queue;
  std::deque<int> expected;
  int next = 0;
  // Pushes outpace pops, so the ring grows several times with its head in mid-ring.
  for (int round = 0; round < 200; ++round) {
    for (int k = 0; k < 3; ++k) {
      queue.push_back(next);
      expected.push_back(next++);
    }
    if (round % 2 == 0) {
      REQUIRE(queue.front() == expected.front());
      queue.pop_front();
      expected.pop_front();
    }
    REQUIRE(queue.size() == expected.size());
    for (size_t i = 0; i < expected.size(); i += 7)
      REQUIRE(queue[i] == expected[i]);
  }
  while (!queue.empty()) {
    CHECK(queue.front() == expected.front());
    queue.pop_front();
    expected.pop_front();
  }
  CHECK(expected.empty());
}

TEST_CASE("a ring queue swaps its contents whole and clears to empty") {
  RingQueue<std::string> a;
  RingQueue<std::string> b;
  for (int i = 0; i < 20; ++i)
    a.push_back(std::to_string(i));
  a.pop_front();
  b.push_back("only");
  a.swap(b);
  REQUIRE(a.size() == 1);
  CHECK(a.front() == "only");
  REQUIRE(b.size() == 19);
  CHECK(b.front() == "1");
  CHECK(b[18] == "19");
  b.clear();
  CHECK(b.empty());
  b.push_back("again");
  CHECK(b.front() == "again");
}

}  // namespace rlcheck::base
