#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "config/duration.hpp"
#include "config/rate.hpp"

using rlcheck::config::format_rate;
using rlcheck::config::parse_rate;
using rlcheck::config::Rate;
using namespace std::chrono_literals;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("parse_rate reads a count per bare unit as one of that unit") {
  auto per_second = parse_rate("5/s");
  REQUIRE(per_second.has_value());
  CHECK(per_second->tokens == 5);
  CHECK(per_second->period == 1s);

  auto per_minute = parse_rate("100/m");
  REQUIRE(per_minute.has_value());
  CHECK(per_minute->tokens == 100);
  CHECK(per_minute->period == 1min);

  auto per_hour = parse_rate("3/h");
  REQUIRE(per_hour.has_value());
  CHECK(per_hour->period == 1h);

  auto per_ms = parse_rate("1/ms");
  REQUIRE(per_ms.has_value());
  CHECK(per_ms->period == 1ms);
}

TEST_CASE("parse_rate reads a count per full duration") {
  auto rate = parse_rate("10/60s");
  REQUIRE(rate.has_value());
  CHECK(rate->tokens == 10);
  CHECK(rate->period == 60s);

  auto half_second = parse_rate("1/500ms");
  REQUIRE(half_second.has_value());
  CHECK(half_second->tokens == 1);
  CHECK(half_second->period == 500ms);

  auto fractional = parse_rate("3/1.5s");
  REQUIRE(fractional.has_value());
  CHECK(fractional->period == 1500ms);
}

TEST_CASE("parse_rate keeps a fractional period that starts with a dot") {
  // ".5s" is a duration with a number (half a second), not a bare unit.
  REQUIRE(rlcheck::config::parse_duration(".5s").has_value());
  auto rate = parse_rate("1/.5s");
  REQUIRE(rate.has_value());
  CHECK(rate->period == 500ms);
}

TEST_CASE("parse_rate rejects text without a slash") {
  auto rate = parse_rate("5");
  REQUIRE_FALSE(rate.has_value());
  CHECK(mentions(rate.error(), "not a rate"));
  CHECK(mentions(rate.error(), "'5'"));
}

TEST_CASE("parse_rate rejects counts that are not whole numbers above 0") {
  for (const char* text : {"0/s", "-5/s", "x/s", "/s", "2.5/s", "5x/s"}) {
    CAPTURE(text);
    auto rate = parse_rate(text);
    REQUIRE_FALSE(rate.has_value());
    CHECK(mentions(rate.error(), "count"));
  }
}

TEST_CASE("parse_rate rejects bad or zero periods, saying it is the period") {
  for (const char* text : {"5/", "5/60", "5/5parsecs", "5/0s", "5/0ms"}) {
    CAPTURE(text);
    auto rate = parse_rate(text);
    REQUIRE_FALSE(rate.has_value());
    CHECK(mentions(rate.error(), "period"));
  }
  CHECK(mentions(parse_rate("5/60").error(), "unit"));
  CHECK(mentions(parse_rate("5/0s").error(), "above 0"));
}

TEST_CASE("format_rate spells a rate back so parse_rate reads the same rate") {
  for (const char* text : {"5/s", "10/60s", "100/m", "1/500ms", "7/2h"}) {
    CAPTURE(text);
    auto rate = parse_rate(text);
    REQUIRE(rate.has_value());
    auto again = parse_rate(format_rate(*rate));
    REQUIRE(again.has_value());
    CHECK(again->tokens == rate->tokens);
    CHECK(again->period == rate->period);
  }
  CHECK(format_rate(Rate{5, 1s}) == "5/s");
  CHECK(format_rate(Rate{10, 1min}) == "10/m");
  CHECK(format_rate(Rate{10, 60s}) == "10/m");
  CHECK(format_rate(Rate{1, 500ms}) == "1/500ms");
  CHECK(format_rate(Rate{7, 2h}) == "7/2h");
  CHECK(format_rate(Rate{3, 10s}) == "3/10s");
}
