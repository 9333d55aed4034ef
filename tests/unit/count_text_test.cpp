#include <doctest/doctest.h>

#include "config/count_text.hpp"

using rlcheck::config::counted;

TEST_CASE("counted puts the noun in the singular for one only") {
  CHECK(counted(1, "run") == "1 run");
  CHECK(counted(4, "run") == "4 runs");
  CHECK(counted(0, "scenario") == "0 scenarios");
  CHECK(counted(1, "errored request") == "1 errored request");
  CHECK(counted(2, "identity", "identities") == "2 identities");
  CHECK(counted(1, "identity", "identities") == "1 identity");
}
