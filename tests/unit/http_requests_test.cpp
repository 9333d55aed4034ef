#include <doctest/doctest.h>

#include "http/http_requests.hpp"

using rlcheck::http::HttpRequests;

TEST_CASE("HttpRequests::source_index: identity j leaves from address j mod count") {
  HttpRequests target;
  CHECK(target.source_index(7) == 0);  // no --source-address

  target.source_addresses = {"127.0.0.1", "127.0.0.2", "127.0.0.3"};
  CHECK(target.source_index(0) == 0);
  CHECK(target.source_index(1) == 1);
  CHECK(target.source_index(2) == 2);
  CHECK(target.source_index(3) == 0);
  CHECK(target.source_index(5) == 2);
}
