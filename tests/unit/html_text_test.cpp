#include <doctest/doctest.h>

#include "report/html_text.hpp"

using rlcheck::report::html::number_text;
using rlcheck::report::html::tick_text;

TEST_CASE("html text: numbers without noise digits, ticks short enough for a margin") {
  CHECK(number_text(10) == "10");
  CHECK(number_text(10.5) == "10.5");
  CHECK(number_text(0.2 * 3) == "0.6");
  CHECK(tick_text(5) == "5");
  CHECK(tick_text(0.4) == "0.4");
  CHECK(tick_text(9999) == "9999");
  CHECK(tick_text(10000) == "10k");
  CHECK(tick_text(25000) == "25k");
  CHECK(tick_text(250000) == "250k");
  CHECK(tick_text(1500000) == "1.5M");
  CHECK(tick_text(20000000) == "20M");
}
