#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "report/html_layout.hpp"

using rlcheck::report::html::Anchor;
using rlcheck::report::html::Axis;
using rlcheck::report::html::Box;
using rlcheck::report::html::first_clear;
using rlcheck::report::html::LabelLayout;
using rlcheck::report::html::nice_axis;
using rlcheck::report::html::overlaps;
using rlcheck::report::html::text_box;
using rlcheck::report::html::turned_text_box;

namespace {

// 1, 2 or 5 times a power of ten.
bool nice(double step) {
  const double power = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  const double factor = step / power;
  return std::abs(factor - 1) < 1e-9 || std::abs(factor - 2) < 1e-9 || std::abs(factor - 5) < 1e-9;
}

// Ticks a nice step would give an axis over [0, max].
size_t ticks_with(double step, double max) {
  return static_cast<size_t>(std::ceil(max / step * (1 - 1e-9)));
}

}  // namespace

TEST_CASE("html axis: a nice step, 4 to 6 ticks up to a top just above the data") {
  int outside = 0;
  for (double max = 0.3; max < 2e6; max *= 1.07) {
    CAPTURE(max);
    const Axis axis = nice_axis(max);
    CHECK(nice(axis.step));
    CHECK(axis.top >= max);
    CHECK(axis.top - axis.step < max);  // no tick above the data but the one that covers it
    REQUIRE(!axis.ticks.empty());
    CHECK(axis.ticks.back() == doctest::Approx(axis.top));
    for (size_t k = 0; k < axis.ticks.size(); ++k)
      CHECK(axis.ticks[k] == doctest::Approx(static_cast<double>(k + 1) * axis.step));
    if (axis.ticks.size() >= 4 && axis.ticks.size() <= 6)
      continue;
    // Only where no nice step gives 4 to 6 (12 < max <= 15 and its powers of ten): then the
    // count nearest, 7 (a step of 2) up to 14, 3 (of 5) above.
    ++outside;
    CHECK(axis.ticks.size() == (max / std::pow(10.0, std::floor(std::log10(max))) <= 1.4 ? 7 : 3));
    for (double power = 1e-3; power < 1e8; power *= 10) {
      for (double factor : {1.0, 2.0, 5.0}) {
        const size_t count = ticks_with(factor * power, max);
        CHECK((count < 4 || count > 6));
      }
    }
  }
  CHECK(outside > 0);  // the loop met such a maximum
  CHECK(outside < 40);
}

TEST_CASE("html axis: the rate and window scales of a 40/s run against a limit of 10") {
  const Axis rate = nice_axis(40 * 1.12);
  CHECK(rate.step == 10);
  CHECK(rate.top == 50);
  CHECK(rate.ticks == std::vector<double>{10, 20, 30, 40, 50});
  const Axis window = nice_axis(10 * 1.12);
  CHECK(window.step == 2);
  CHECK(window.top == 12);
  CHECK(window.ticks.size() == 6);
  CHECK(nice_axis(0).top == doctest::Approx(1));  // nothing to show still gets a scale
  CHECK(nice_axis(-3).ticks.size() >= 4);
}

TEST_CASE("html axis: with no step giving 4 to 6 ticks, the count nearest, more ticks first") {
  // 13: a step of 2 gives 7 ticks, of 5 three; both are one from the range.
  const Axis axis = nice_axis(13);
  CHECK(axis.step == 2);
  CHECK(axis.ticks.size() == 7);
  // Other bounds: 1 to 3 ticks over 45 is a step of 20.
  CHECK(nice_axis(45, 1, 3).step == 20);
}

TEST_CASE("html labels: a text's box from its font size, length and anchor") {
  const Box start = text_box(100, 50, Anchor::start, 10, "abcd");
  CHECK(start.left == 100);
  CHECK(start.right == doctest::Approx(124.8));  // 4 characters of 0.62 em
  CHECK(start.top == doctest::Approx(42));
  CHECK(start.bottom == doctest::Approx(52));
  const Box end = text_box(100, 50, Anchor::end, 10, "abcd");
  CHECK(end.right == 100);
  CHECK(end.left == doctest::Approx(75.2));
  const Box middle = text_box(100, 50, Anchor::middle, 10, "abcd");
  CHECK(middle.left == doctest::Approx(87.6));
  CHECK(middle.right == doctest::Approx(112.4));
  // Characters, not bytes: "µs" is two wide.
  CHECK(text_box(0, 0, Anchor::start, 10, "2 µs").right == doctest::Approx(24.8));
  // Turned a quarter, the length runs down the page and the ascent to one side.
  const Box up = turned_text_box(16, 80, true, 10, "abcd");
  CHECK(up.top == doctest::Approx(80 - 12.4));
  CHECK(up.bottom == doctest::Approx(80 + 12.4));
  CHECK(up.left == doctest::Approx(8));
  CHECK(up.right == doctest::Approx(18));
  const Box down = turned_text_box(16, 80, false, 10, "abcd");
  CHECK(down.left == doctest::Approx(14));
  CHECK(down.right == doctest::Approx(24));
}

TEST_CASE("html labels: boxes overlap when they share area, not when they only touch") {
  const Box a{0, 0, 10, 10};
  CHECK(overlaps(a, Box{5, 5, 15, 15}));
  CHECK(overlaps(Box{5, 5, 15, 15}, a));
  CHECK(overlaps(a, Box{2, 2, 3, 3}));           // inside
  CHECK_FALSE(overlaps(a, Box{10, 0, 20, 10}));  // side by side
  CHECK_FALSE(overlaps(a, Box{0, 10, 10, 20}));  // one above the other
  CHECK_FALSE(overlaps(a, Box{11, 11, 12, 12}));
}

TEST_CASE("html labels: a layout keeps a label only where it covers none kept before") {
  LabelLayout layout;
  CHECK(layout.keep_if_clear(Box{0, 0, 10, 10}));
  CHECK_FALSE(layout.keep_if_clear(Box{5, 5, 15, 15}));
  CHECK(layout.keep_if_clear(Box{10, 0, 20, 10}));
  CHECK_FALSE(layout.clear(Box{15, 5, 25, 15}));  // the one kept second counts too
  layout.keep(Box{0, 20, 10, 30});                // kept whatever it meets
  CHECK_FALSE(layout.clear(Box{0, 25, 5, 26}));
  CHECK(layout.clear(Box{0, 10, 10, 20}));
}

TEST_CASE("html labels: a movable label takes the first place clear of the labels to come") {
  LabelLayout layout;
  layout.keep(Box{0, 0, 100, 10});
  const std::vector<Box> places{{0, 5, 50, 15}, {0, 20, 50, 30}, {60, 20, 100, 30}};
  // The first place covers a kept label: the second is clear.
  CHECK(first_clear(layout, places, {}) == 1);
  // A tick to come sits on the second: the third is clear of both.
  const std::vector<Box> ticks{{40, 25, 55, 35}};
  CHECK(first_clear(layout, places, ticks) == 2);
  // Covering the ticks everywhere, it takes the first place clear of the kept labels.
  const std::vector<Box> everywhere{{0, 0, 100, 40}};
  CHECK(first_clear(layout, places, everywhere) == 1);
  // Clear nowhere, the first.
  layout.keep(Box{0, 0, 100, 40});
  CHECK(first_clear(layout, places, {}) == 0);
}
