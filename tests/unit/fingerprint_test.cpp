#include <doctest/doctest.h>

#include "coord/fingerprint.hpp"

using rlcheck::coord::first_difference;

TEST_CASE("first_difference: none when the workers run the same test") {
  CHECK_FALSE(first_difference("requests=200\nlimit=10\n", "requests=200\nlimit=10\n"));
  CHECK_FALSE(first_difference("limit=10\nrequests=200\n", "requests=200\nlimit=10\n"));
}

TEST_CASE("first_difference: the first setting that differs, theirs and ours") {
  CHECK(first_difference("limit=10\nrequests=300\n", "limit=10\nrequests=200\n") ==
        "requests=300 there, requests=200 here");
  CHECK(first_difference("limit=10\n", "limit=10\nrate=5/s\n") ==
        "rate=(unset) there, rate=5/s here");
  CHECK(first_difference("limit=10\nrate=5/s\n", "limit=10\n") == "rate=5/s there, unset here");
  CHECK(first_difference("url=http://a/?x=1\n", "url=http://a/?x=2\n") ==
        "url=http://a/?x=1 there, url=http://a/?x=2 here");
}
