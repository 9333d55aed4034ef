#include "report/html_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace rlcheck::report::html {

Axis nice_axis(double max, int fewest, int most) {
  if (!(max > 0))
    max = 1;
  // Counts of ticks for steps from a hundredth of the range's order up to the whole range.
  const auto ticks_for = [max](double step) {
    return static_cast<int>(std::ceil(max / step * (1 - 1e-9)));
  };
  const auto distance = [fewest, most](int count) {
    return count < fewest ? fewest - count : count > most ? count - most : 0;
  };
  double best = 0;
  int best_distance = std::numeric_limits<int>::max();
  for (double power = std::pow(10.0, std::floor(std::log10(max)) - 2); power <= max * 10;
       power *= 10) {
    for (double factor : {1.0, 2.0, 5.0}) {
      const double step = factor * power;
      const int d = distance(ticks_for(step));
      if (d < best_distance) {  // ascending steps: a tie keeps the smaller step, more ticks
        best = step;
        best_distance = d;
      }
    }
  }
  Axis axis;
  axis.step = best;
  const int count = ticks_for(best);
  for (int k = 1; k <= count; ++k)
    axis.ticks.push_back(k * best);
  axis.top = count * best;
  return axis;
}

double text_width(std::string_view utf8, double font_size) {
  const auto code_points = std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<uint8_t>(c) & 0xC0) != 0x80;  // not a continuation byte
  });
  return static_cast<double>(code_points) * k_char_em * font_size;
}

bool overlaps(const Box& a, const Box& b) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

Box text_box(double x, double baseline, Anchor anchor, double font_size, std::string_view text) {
  const double width = text_width(text, font_size);
  const double left = anchor == Anchor::start    ? x
                      : anchor == Anchor::middle ? x - width / 2
                                                 : x - width;
  return {left, baseline - k_ascent_em * font_size, left + width,
          baseline + k_descent_em * font_size};
}

Box turned_text_box(double x, double y, bool upwards, double font_size, std::string_view text) {
  const double half = text_width(text, font_size) / 2;
  const double ascent = k_ascent_em * font_size, descent = k_descent_em * font_size;
  return upwards ? Box{x - ascent, y - half, x + descent, y + half}
                 : Box{x - descent, y - half, x + ascent, y + half};
}

bool LabelLayout::clear(const Box& box) const {
  return std::none_of(kept_.begin(), kept_.end(),
                      [&box](const Box& kept) { return overlaps(kept, box); });
}

bool LabelLayout::keep_if_clear(const Box& box) {
  if (!clear(box))
    return false;
  kept_.push_back(box);
  return true;
}

size_t first_clear(const LabelLayout& layout, std::span<const Box> candidates,
                   std::span<const Box> avoid) {
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Box& box = candidates[i];
    if (layout.clear(box) && std::none_of(avoid.begin(), avoid.end(), [&box](const Box& other) {
          return overlaps(box, other);
        })) {
      return i;
    }
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (layout.clear(candidates[i]))
      return i;
  }
  return 0;
}

}  // namespace rlcheck::report::html
