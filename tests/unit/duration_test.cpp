#include <doctest/doctest.h>

#include "config/duration.hpp"

using rlcheck::config::parse_duration;

TEST_CASE("parse_duration reads the units of the command line") {
  CHECK(parse_duration("60s").value() == std::chrono::seconds(60));
  CHECK(parse_duration("500ms").value() == std::chrono::milliseconds(500));
  CHECK(parse_duration("1m").value() == std::chrono::minutes(1));
  CHECK(parse_duration("1h").value() == std::chrono::hours(1));
  CHECK(parse_duration("1.5s").value() == std::chrono::milliseconds(1500));
}

TEST_CASE("parse_duration rejects what it cannot read, saying why") {
  CHECK_FALSE(parse_duration("5parsecs").has_value());
  CHECK(parse_duration("5parsecs").error().find("unknown unit") != std::string::npos);
  CHECK(parse_duration("60").error().find("needs a unit") != std::string::npos);
  CHECK_FALSE(parse_duration("").has_value());
  CHECK_FALSE(parse_duration("-1s").has_value());
  CHECK_FALSE(parse_duration("s").has_value());
}
