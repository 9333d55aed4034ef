#include <doctest/doctest.h>

#include "config/duration.hpp"

using rlcheck::config::format_duration;
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

TEST_CASE("format_duration spells every digit, so the text parses back to the same duration") {
  CHECK(format_duration(std::chrono::milliseconds(1500)) == "1.5s");
  CHECK(format_duration(std::chrono::nanoseconds(123'456'700)) == "123.4567ms");
  CHECK(format_duration(std::chrono::seconds(114'644'679)) == "114644679s");
  CHECK(format_duration(std::chrono::nanoseconds(1'000'000'001)) == "1.000000001s");
  CHECK(format_duration(std::chrono::microseconds(2'500)) == "2.5ms");
  for (const char* text : {"114644679s", "1.000000001s", "999.999999ms", "2h", "90m", "1.25us"}) {
    CAPTURE(text);
    const auto duration = parse_duration(text).value();
    CHECK(parse_duration(format_duration(duration)).value() == duration);
  }
}
