#pragma once
// Where the charts of the HTML report put their scales and their text: an axis's ticks (nice
// round steps) and the boxes labels take, estimated from their font size and length, so that
// no label is drawn over another. Pure arithmetic; the charts in report/html_charts use it.

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace rlcheck::report::html {

// A value axis from 0 up: a step of 1, 2 or 5 times a power of ten, the top it reaches (a whole
// number of steps, at or above the data's maximum) and its ticks above 0 (step, 2 step, ...,
// top).
struct Axis {
  double step = 1;
  double top = 1;
  std::vector<double> ticks;
};

// The axis over [0, max] whose tick count lies within [fewest, most] (the smaller step when
// two do); when no nice step gives such a count, the one nearest to it. max <= 0 reads as 1.
Axis nice_axis(double max, int fewest = 4, int most = 6);

// An estimate of a label's width: k_char_em of the font size per character (code point), the
// average advance of DejaVu Sans and its like, rounded up.
inline constexpr double k_char_em = 0.62;
// Above and below the baseline a line of text takes, in font sizes.
inline constexpr double k_ascent_em = 0.8;
inline constexpr double k_descent_em = 0.2;

double text_width(std::string_view utf8, double font_size);

// How SVG's text-anchor places a label on its x.
enum class Anchor { start, middle, end };

struct Box {
  double left = 0, top = 0, right = 0, bottom = 0;
};

// Boxes that share some area (touching edges do not overlap).
bool overlaps(const Box& a, const Box& b);

// The box of `text` at (x, baseline), unrotated.
Box text_box(double x, double baseline, Anchor anchor, double font_size, std::string_view text);

// The box of `text` centred on (x, y) and turned a quarter: by -90 degrees it reads upwards
// (its ascent to the left), by 90 downwards (its ascent to the right).
Box turned_text_box(double x, double y, bool upwards, double font_size, std::string_view text);

// A chart's labels, kept one at a time: a label is kept only when clear of those kept before,
// so what is kept first (the labels that must show) wins a place.
class LabelLayout {
 public:
  bool clear(const Box& box) const;
  // Keeps `box` when it is clear; says whether it did.
  bool keep_if_clear(const Box& box);
  // Keeps `box` whatever it meets.
  void keep(const Box& box) { kept_.push_back(box); }

 private:
  std::vector<Box> kept_;
};

// Which of a movable label's `candidates` places to take: the first clear of `layout` and of
// every box in `avoid` (labels still to come, which would otherwise give way), else the first
// clear of `layout`, else the first.
size_t first_clear(const LabelLayout& layout, std::span<const Box> candidates,
                   std::span<const Box> avoid);

}  // namespace rlcheck::report::html
