#include "report/html_charts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "report/html_layout.hpp"
#include "report/html_parts.hpp"
#include "report/html_report.hpp"
#include "report/html_text.hpp"
#include "report/junit_report.hpp"

namespace rlcheck::report::html {
namespace {

// The same colours on every page, so people learn them and screenshots can be compared.
constexpr std::string_view k_allowed = "#2e7d32";
constexpr std::string_view k_denied = "#c62828";
constexpr std::string_view k_errors = "#9e9e9e";
constexpr std::string_view k_span_fill = "rgba(255,160,0,0.35)";
constexpr std::string_view k_span_stroke = "#ff8f00";
constexpr std::string_view k_span_text = "#e65100";
constexpr std::string_view k_contract = "#1565c0";
constexpr std::string_view k_in_window = "#6a1b9a";
constexpr std::string_view k_axis = "#757575";
constexpr std::string_view k_grid = "#eeeeee";
constexpr std::string_view k_hint_ok = "#546e7a";
constexpr std::string_view k_hint_early = "#e53935";
constexpr std::string_view k_hint_late = "#ef6c00";
constexpr std::string_view k_fault_fill = "rgba(0,137,123,0.22)";
constexpr std::string_view k_fault_stroke = "#00897b";
constexpr std::string_view k_fault_text = "#00695c";
constexpr std::string_view k_offered = "#f57c00";
constexpr std::string_view k_ban_fill = "rgba(136,14,79,0.16)";
constexpr std::string_view k_ban_stroke = "#880e4f";

std::string esc(std::string_view text) {
  return xml_escape(text);
}

std::string contract_label(const Report& report, double contract_line) {
  return fmt::format("contract ({}): {} per {}",
                     report.params.contract.empty() ? "sliding" : report.params.contract,
                     number_text(contract_line), window_text(report.params.window_ms));
}

// A dashed line across the timeline at what one window may hold, with its label.
struct LimitLine {
  double value = 0;
  std::string label;
  std::string_view colour;
  std::string line_class;
  std::string label_class;
};

// One contract's line; with several contracts, a line per part the timeline can draw
// (checks::add_timeline_parts), in the part's colour.
std::vector<LimitLine> limit_lines(const Report& report, const checks::Timeline& timeline) {
  if (timeline.in_flight) {
    return {{timeline.contract_line,
             fmt::format("cap ({}): {} in flight at once", report.params.contract,
                         number_text(timeline.contract_line)),
             k_contract, "contract-line", "contract-label"}};
  }
  if (timeline.parts.empty()) {
    return {{timeline.contract_line, contract_label(report, timeline.contract_line), k_contract,
             "contract-line", "contract-label"}};
  }
  std::vector<LimitLine> lines;
  for (size_t p = 0; p < timeline.parts.size(); ++p) {
    const checks::TimelinePart& part = timeline.parts[p];
    if (part.fit != checks::PartLineFit::drawn)
      continue;
    lines.push_back({part.line, part_line_label(part, timeline.window_ns), part_colour(p),
                     fmt::format("part-line part-{}", p + 1),
                     fmt::format("part-label part-{}", p + 1)});
  }
  return lines;
}

// Under --cost the timeline counts units: its axes and captions say so.
std::string unit_text(const checks::Timeline& timeline, std::string_view what) {
  return timeline.in_units ? fmt::format("units {}", what) : std::string(what);
}

// One identity of one run over time; fixed size so screenshots are predictable.
namespace frame {
constexpr int width = 900, height = 220;
constexpr double left = 56, right = 844, top = 30, baseline = 136, bottom = 184;
constexpr double bar_span = 44;  // the tallest bar, above and below the baseline
constexpr double font = 11;      // the svg's font-size, every label's but the worst span's
}  // namespace frame

// One text of a chart: where, how anchored or turned, and its other attributes (class, fill).
struct Label {
  double x = 0, y = 0;
  Anchor anchor = Anchor::start;
  int turn = 0;  // degrees: 0, or -90 (reads upwards) or 90 (downwards) about (x, y)
  double font_size = frame::font;
  std::string text;
  std::string attributes;

  Box box() const {
    return turn == 0 ? text_box(x, y, anchor, font_size, text)
                     : turned_text_box(x, y, turn < 0, font_size, text);
  }
  std::string svg() const {
    constexpr std::string_view anchors[] = {"start", "middle", "end"};
    const std::string place =
        turn == 0 ? fmt::format("x=\"{:.1f}\" y=\"{:.1f}\"", x, y)
                  : fmt::format("transform=\"translate({:.1f} {:.1f}) rotate({})\"", x, y, turn);
    return fmt::format("<text {} text-anchor=\"{}\" font-size=\"{}\"{}>{}</text>\n", place,
                       anchors[static_cast<int>(anchor)], font_size, attributes, esc(text));
  }
};

// A chart's labels, laid out so that none covers another and drawn over everything else: a
// label that must show is kept first, the others only where they are clear.
class ChartText {
 public:
  void always(const Label& label) {
    layout_.keep(label.box());
    svg_ += label.svg();
  }
  bool if_clear(const Label& label) {
    if (!layout_.keep_if_clear(label.box()))
      return false;
    svg_ += label.svg();
    return true;
  }
  // The first of `candidates` clear of the labels kept and of `avoid` (labels to come), as
  // first_clear picks it, kept.
  void best_of(const std::vector<Label>& candidates, const std::vector<Label>& avoid) {
    std::vector<Box> boxes, avoided;
    for (const Label& label : candidates)
      boxes.push_back(label.box());
    for (const Label& label : avoid)
      avoided.push_back(label.box());
    always(candidates[first_clear(layout_, boxes, avoided)]);
  }
  const std::string& svg() const { return svg_; }

 private:
  LabelLayout layout_;
  std::string svg_;
};

std::string fill(std::string_view colour) {
  return fmt::format(" fill=\"{}\"", colour);
}

// A white outline under a label's glyphs, so that it reads over the lines it sits on.
constexpr std::string_view k_halo = " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"";

// The open model: requests sent per second over every identity (solid) and the rate planned
// (dashed), on a scale of their own over the upper half, its ticks inside the plot on the
// right (returned in `ticks`, for the caller to lay out with the other labels). Each point
// stands for a bin of checks/offered_rate, at its middle.
template <typename XOf>
std::string offered_rate_svg(const checks::Timeline& timeline, const XOf& x_of,
                             std::vector<Label>& ticks) {
  using namespace frame;
  if (timeline.rate.empty())
    return "";
  double peak = 1;
  for (const checks::RateBin& bin : timeline.rate)
    peak = std::max({peak, bin.sent_per_s, bin.planned_per_s});
  const Axis axis = nice_axis(peak * 1.12);
  auto rate_y = [&](double value) { return baseline - value / axis.top * (baseline - top); };
  std::string sent, planned;
  for (const checks::RateBin& bin : timeline.rate) {
    const double x = x_of(static_cast<double>(bin.from_ns + (bin.to_ns - bin.from_ns) / 2));
    sent += fmt::format("{}{:.1f},{:.1f}", sent.empty() ? "" : " ", x, rate_y(bin.sent_per_s));
    planned +=
        fmt::format("{}{:.1f},{:.1f}", planned.empty() ? "" : " ", x, rate_y(bin.planned_per_s));
  }
  std::string out = fmt::format(
      "<polyline class=\"offered-rate\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" "
      "stroke-linejoin=\"round\" points=\"{}\"/>\n"
      "<polyline class=\"planned-rate\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.2\" "
      "stroke-dasharray=\"4 3\" points=\"{}\"/>\n",
      k_offered, sent, k_offered, planned);
  for (double v : axis.ticks) {
    ticks.push_back({right - 4, rate_y(v) + 4, Anchor::end, 0, font, tick_text(v) + "/s",
                     " class=\"rate-axis\"" + fill(k_offered) + std::string(k_halo)});
  }
  return out;
}

std::string timeline_svg(const std::string& id, const checks::Timeline& timeline,
                         const checks::TimelineSeries& series, const checks::AdmissionPeak* worst,
                         const std::vector<LimitLine>& limits,
                         const std::vector<checks::FaultWindow>& faults) {
  using namespace frame;
  const double duration = static_cast<double>(std::max<int64_t>(timeline.duration_ns, 1));
  const double plot_width = right - left;
  auto x_of = [&](double ns) { return left + std::clamp(ns / duration, 0.0, 1.0) * plot_width; };
  const size_t bins = series.allowed.size();
  auto bin_start = [&](size_t bin) {
    return static_cast<double>(bin) * static_cast<double>(timeline.bin_ns);
  };

  // What the line draws: admissions in the trailing window, or (a concurrency cap) the most in
  // flight surely, with the most possibly in flight as a second, dashed line.
  const bool in_flight = timeline.in_flight && series.in_flight_surely.size() == bins &&
                         series.in_flight_possibly.size() == bins;
  const std::vector<uint32_t>& line = in_flight ? series.in_flight_surely : series.in_window;
  uint32_t bar_max = 1, line_peak = 0;
  for (size_t bin = 0; bin < bins; ++bin) {
    bar_max = std::max({bar_max, series.allowed[bin], series.denied[bin] + series.errors[bin]});
    line_peak = std::max(line_peak, line[bin]);
    if (in_flight)
      line_peak = std::max(line_peak, series.in_flight_possibly[bin]);
  }
  double line_max = static_cast<double>(line_peak);
  for (const LimitLine& limit : limits)
    line_max = std::max(line_max, limit.value);
  const Axis line_axis = nice_axis(std::max(1.0, line_max) * 1.12);
  auto line_y = [&](double value) { return baseline - value / line_axis.top * (baseline - top); };
  auto bar_h = [&](uint32_t count) { return static_cast<double>(count) / bar_max * bar_span; };

  ChartText text;
  std::string out = fmt::format(
      "<svg class=\"timeline\" id=\"{}\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" font-size=\"{}\">\n",
      id, width, height, width, height, font);
  out += fmt::format(
      "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" "
      "stroke=\"#e0e0e0\"/>\n",
      left, top, plot_width, bottom - top);

  // The margins' labels: the axes' names, the bars' scale (the same above and below the
  // baseline), and the worst span's figures above the plot.
  text.always({16, (top + baseline) / 2, Anchor::middle, -90, font,
               in_flight ? std::string("in flight") : unit_text(timeline, "in window"),
               fill(k_in_window)});
  text.always(
      {width - 14, (top + bottom) / 2, Anchor::middle, 90, font,
       unit_text(timeline,
                 fmt::format("per {} bin", ms_text(static_cast<double>(timeline.bin_ns) / 1e6))),
       fill(k_axis)});
  for (double y : {baseline - bar_span + 4, baseline + bar_span + 4})
    text.always({right + 5, y, Anchor::start, 0, font, std::to_string(bar_max), fill(k_axis)});
  if (!timeline.rate.empty()) {
    text.always({left, height - 3, Anchor::start, 0, font,
                 "offered rate, sent per second (dashed: planned)",
                 " class=\"rate-label\"" + fill(k_offered)});
  }
  if (worst != nullptr && worst->count > 0) {
    const double x0 = x_of(static_cast<double>(worst->start_ns));
    const double x1 = x_of(static_cast<double>(worst->start_ns + worst->length_ns));
    text.always({std::clamp((x0 + x1) / 2, left + 130, right - 130), top - 9, Anchor::middle, 0, 12,
                 peak_text(*worst),
                 " class=\"worst-span-label\" font-weight=\"600\"" + fill(k_span_text)});
  }

  // Time axis: vertical grid lines and labels.
  const double duration_ms = duration / 1e6;
  const bool seconds = duration_ms >= 2000;
  const double step_ms = nice_step(duration_ms, 8);
  for (double t = 0; t <= duration_ms * (1 + 1e-9); t += step_ms) {
    const double x = x_of(t * 1e6);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\"/>"
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{2}\" y2=\"{4}\" stroke=\"{5}\"/>\n",
        x, top, bottom, k_grid, bottom + 4, k_axis);
    text.if_clear({x, bottom + 17, Anchor::middle, 0, font, time_label(t, seconds), fill(k_axis)});
  }
  // Left axis: admissions in the window, a grid line per tick.
  for (double v : line_axis.ticks) {
    out +=
        fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>\n",
                    left, right, line_y(v), k_grid);
    text.if_clear({left - 6, line_y(v) + 4, Anchor::end, 0, font, tick_text(v), fill(k_in_window)});
  }
  text.if_clear({left - 6, baseline + 4, Anchor::end, 0, font, "0", fill(k_axis)});

  // The worst span, behind the bars so they keep their colours.
  if (worst != nullptr && worst->count > 0) {
    const double x0 = x_of(static_cast<double>(worst->start_ns));
    const double x1 = x_of(static_cast<double>(worst->start_ns + worst->length_ns));
    out += fmt::format(
        "<rect class=\"worst-span\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
        "fill=\"{}\" stroke=\"{}\"/>\n",
        x0, top, std::max(x1 - x0, 1.0), bottom - top, k_span_fill, k_span_stroke);
  }

  // Each ban surely in force (--contract ban) as a band behind the bars, its span in a title.
  for (const auto& [from_ns, to_ns] : series.ban_spans) {
    const double x0 = x_of(static_cast<double>(from_ns));
    const double x1 = x_of(static_cast<double>(to_ns));
    out += fmt::format(
        "<rect class=\"ban-span\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
        "fill=\"{}\" stroke=\"{}\"><title>banned (surely) from {} to {}</title></rect>\n",
        x0, top, std::max(x1 - x0, 1.0), bottom - top, k_ban_fill, k_ban_stroke,
        time_label(static_cast<double>(from_ns) / 1e6, false),
        time_label(static_cast<double>(to_ns) / 1e6, false));
  }

  // Each applied fault as a translucent band with its spec, behind the bars like the span; an
  // instant fault (kill-clients) still gets a visible sliver. Its label goes on the first row
  // near the plot's top where it covers no other label.
  for (const checks::FaultWindow& fault : faults) {
    if (!fault.applied)
      continue;
    const double x0 = x_of(static_cast<double>(fault.at_ns));
    const double x1 = x_of(static_cast<double>(std::max(fault.until_ns, fault.at_ns)));
    out += fmt::format(
        "<rect class=\"fault\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
        "fill=\"{}\" stroke=\"{}\" stroke-dasharray=\"3 2\"><title>{}</title></rect>\n",
        x0, top, std::max(x1 - x0, 3.0), bottom - top, k_fault_fill, k_fault_stroke,
        esc(fault.spec));
    const std::string attributes =
        " class=\"fault-label\" font-weight=\"600\"" + fill(k_fault_text) + std::string(k_halo);
    const double x = std::min(x0 + 3, right - 4 - text_width(fault.spec, font));
    for (double y : {top + 13, top + 26, top + 39}) {
      if (text.if_clear({x, y, Anchor::start, 0, font, fault.spec, attributes}))
        break;
    }
  }

  // Bars as one path per kind: allowed up, denied down, errors below the denied.
  std::string allowed_path, denied_path, error_path;
  for (size_t bin = 0; bin < bins; ++bin) {
    const double x0 = x_of(bin_start(bin));
    const double w = std::max(x_of(bin_start(bin + 1)) - x0, 0.8);
    if (x0 >= right)
      break;
    if (series.allowed[bin] > 0) {
      const double h = bar_h(series.allowed[bin]);
      allowed_path +=
          fmt::format("M{:.2f} {:.2f}h{:.2f}v{:.2f}h{:.2f}z", x0, baseline - h, w, h, -w);
    }
    const double denied_h = bar_h(series.denied[bin]);
    if (series.denied[bin] > 0)
      denied_path += fmt::format("M{:.2f} {}h{:.2f}v{:.2f}h{:.2f}z", x0, baseline, w, denied_h, -w);
    if (series.errors[bin] > 0) {
      error_path += fmt::format("M{:.2f} {:.2f}h{:.2f}v{:.2f}h{:.2f}z", x0, baseline + denied_h, w,
                                bar_h(series.errors[bin]), -w);
    }
  }
  out += fmt::format(
      "<path class=\"bars-allowed\" fill=\"{}\" shape-rendering=\"crispEdges\" d=\"{}\"/>\n"
      "<path class=\"bars-denied\" fill=\"{}\" shape-rendering=\"crispEdges\" d=\"{}\"/>\n"
      "<path class=\"bars-errors\" fill=\"{}\" shape-rendering=\"crispEdges\" d=\"{}\"/>\n",
      k_allowed, allowed_path, k_denied, denied_path, k_errors, error_path);
  out += fmt::format(
      "<line class=\"baseline\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" "
      "stroke=\"#424242\"/>\n",
      left, right, baseline);

  // What one window may hold, and what it held.
  for (const LimitLine& limit : limits) {
    out += fmt::format(
        "<line class=\"{4}\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>\n",
        left, right, line_y(limit.value), limit.colour, limit.line_class);
  }
  const auto polyline = [&](const std::vector<uint32_t>& values) {
    std::string points = fmt::format("{},{}", left, baseline);
    for (size_t bin = 0; bin < bins && bin_start(bin) < duration; ++bin) {
      // A bin's most in flight holds over the whole bin: a step, not a slope.
      if (in_flight)
        points += fmt::format(" {:.1f},{:.1f}", x_of(bin_start(bin)), line_y(values[bin]));
      points += fmt::format(" {:.1f},{:.1f}", x_of(bin_start(bin + 1)), line_y(values[bin]));
    }
    return points;
  };
  if (in_flight) {
    out += fmt::format(
        "<polyline class=\"in-flight-possibly\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"1.2\" stroke-dasharray=\"3 2\" stroke-opacity=\"0.7\" "
        "points=\"{}\"/>\n",
        k_in_window, polyline(series.in_flight_possibly));
    out += fmt::format(
        "<polyline class=\"in-flight-surely\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" "
        "stroke-linejoin=\"round\" points=\"{}\"/>\n",
        k_in_window, polyline(series.in_flight_surely));
  } else {
    out += fmt::format(
        "<polyline class=\"in-window\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" "
        "stroke-linejoin=\"round\" points=\"{}\"/>\n",
        k_in_window, polyline(series.in_window));
  }
  std::vector<Label> rate_ticks;
  out += offered_rate_svg(timeline, x_of, rate_ticks);

  // Each contract's label above its line at the right, else where it covers no other label:
  // below the line, then beside the rate's ticks, then at the left; the ticks give way only
  // when it fits nowhere.
  double beside = right - 4;
  for (const Label& tick : rate_ticks)
    beside = std::min(beside, tick.box().left - 8);
  for (const LimitLine& limit : limits) {
    const std::string attributes =
        " class=\"" + limit.label_class + "\"" + fill(limit.colour) + std::string(k_halo);
    const double limit_y = line_y(limit.value);
    const double above = limit_y - 5, below = limit_y + 5 + k_ascent_em * font;
    std::vector<Label> places;
    for (const auto& [x, anchor] :
         {std::pair{right - 4, Anchor::end}, std::pair{beside, Anchor::end},
          std::pair{left + 4, Anchor::start}}) {
      for (double y : {above, below})
        places.push_back({x, y, anchor, 0, font, limit.label, attributes});
    }
    text.best_of(places, rate_ticks);
  }
  for (const Label& tick : rate_ticks)
    text.if_clear(tick);
  return out + text.svg() + "</svg>\n";
}

// What a wait chart holds each slice's longest wait to: per bin, the promise (drawn, -1: none)
// and the promise plus the delay check's tolerance (a wait past it is drawn in red).
struct WaitPromise {
  const char* svg_class;
  std::vector<int64_t> promised_ns, allowed_ns;
  std::string label;
};

// --contract queue and slow-down: under an identity's timeline, on the same time axis, the
// longest wait beyond the unloaded latency of the requests sent in each slice, against what
// they were promised: a bar past the promise and the delay check's tolerance in the denied
// colour.
std::string wait_svg(const std::string& id, const checks::Timeline& timeline,
                     const std::vector<int64_t>& waits, const WaitPromise& promise) {
  constexpr int width = frame::width, height = 130;
  constexpr double left = frame::left, right = frame::right, top = 14, bottom = 96;
  const double duration = static_cast<double>(std::max<int64_t>(timeline.duration_ns, 1));
  auto x_of = [&](double ns) {
    return left + std::clamp(ns / duration, 0.0, 1.0) * (right - left);
  };
  auto x_of_bin = [&](size_t bin) {
    return x_of(static_cast<double>(bin) * static_cast<double>(timeline.bin_ns));
  };
  auto ms_of = [](int64_t ns) { return static_cast<double>(ns) / 1e6; };
  double most_ms = 0;
  for (int64_t wait : waits)
    most_ms = std::max(most_ms, ms_of(wait));
  for (int64_t promised : promise.promised_ns)
    most_ms = std::max(most_ms, ms_of(promised));
  const Axis axis = nice_axis(std::max(1.0, most_ms) * 1.12, 2, 4);
  auto y_of = [&](double ms) { return bottom - ms / axis.top * (bottom - top); };

  ChartText text;
  std::string out = fmt::format(
      "<svg class=\"{}\" id=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-size=\"{}\">\n"
      "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" "
      "stroke=\"#e0e0e0\"/>\n",
      promise.svg_class, id, width, height, width, height, frame::font, left, top, right - left,
      bottom - top);
  text.always({16, (top + bottom) / 2, Anchor::middle, -90, frame::font, "wait", fill(k_axis)});
  for (double v : axis.ticks) {
    out +=
        fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>\n",
                    left, right, y_of(v), k_grid);
    text.if_clear(
        {left - 6, y_of(v) + 4, Anchor::end, 0, frame::font, time_label(v, false), fill(k_axis)});
  }
  std::string kept, late;
  for (size_t bin = 0; bin < waits.size(); ++bin) {
    const int64_t wait = waits[bin];
    if (wait < 0)
      continue;
    const double x0 = x_of_bin(bin), x1 = x_of_bin(bin + 1);
    const double y = y_of(ms_of(wait));
    const bool past = bin < promise.allowed_ns.size() && promise.allowed_ns[bin] >= 0 &&
                      wait > promise.allowed_ns[bin];
    (past ? late : kept) +=
        fmt::format("M{:.2f} {:.2f}h{:.2f}v{:.2f}h{:.2f}z", x0, y, std::max(x1 - x0, 0.8),
                    bottom - y, -std::max(x1 - x0, 0.8));
  }
  out += fmt::format(
      "<path class=\"waits-kept\" fill=\"{}\" shape-rendering=\"crispEdges\" d=\"{}\"/>\n"
      "<path class=\"waits-late\" fill=\"{}\" shape-rendering=\"crispEdges\" d=\"{}\"/>\n",
      k_allowed, kept, k_denied, late);
  // The promise as a step line from the first bin that has one to the last, each level held
  // until the next bin that has one.
  std::string steps;
  double level = 0, first_y = 0;
  size_t end = 0;  // past the last bin that has one
  for (size_t bin = 0; bin < promise.promised_ns.size(); ++bin) {
    if (promise.promised_ns[bin] < 0)
      continue;
    const double y = y_of(ms_of(promise.promised_ns[bin]));
    if (steps.empty()) {
      first_y = y;
      steps = fmt::format("M{:.2f} {:.1f}", x_of_bin(bin), y);
    } else if (y != level) {
      steps += fmt::format("H{:.2f}V{:.1f}", x_of_bin(bin), y);
    }
    level = y;
    end = bin + 1;
  }
  if (!steps.empty())
    steps += fmt::format("H{:.2f}", x_of_bin(end));
  const double last_y = level;
  out += fmt::format(
      "<path class=\"promised-wait\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
      "stroke-dasharray=\"7 4\" d=\"{}\"/>\n",
      k_contract, steps);
  const std::string attributes =
      " class=\"promised-wait-label\"" + fill(k_contract) + std::string(k_halo);
  std::vector<Label> places;
  for (const auto& [x, y_line, anchor] :
       {std::tuple{right - 4, last_y, Anchor::end}, std::tuple{left + 4, first_y, Anchor::start}}) {
    for (double y : {y_line - 5, y_line + 5 + k_ascent_em * frame::font})
      places.push_back({x, y, anchor, 0, frame::font, promise.label, attributes});
  }
  if (!steps.empty())
    text.best_of(places, {});
  return out + text.svg() + "</svg>\n";
}

// What the report's timelines draw beyond bars and lines, for the legend.
struct LegendNeeds {
  bool faults = false;
  bool offered = false;
  bool parts = false;
  bool units = false;
  bool in_flight = false;  // a concurrency cap: lines of requests in flight
  bool bans = false;       // a ban: spans surely banned
};

std::string legend_html(const LegendNeeds& needs) {
  const bool faults = needs.faults, offered = needs.offered, parts = needs.parts,
             units = needs.units;
  auto item = [](std::string_view style, std::string_view text) {
    return fmt::format("<span><i style=\"{}\"></i>{}</span>", style, text);
  };
  return "<p class=\"legend\">" +
         item(fmt::format("background:{}", k_allowed),
              units ? "units allowed (up)" : "allowed (up)") +
         item(fmt::format("background:{}", k_denied),
              units ? "units denied (down)" : "denied (down)") +
         item(fmt::format("background:{}", k_errors), units ? "units in errors" : "errors") +
         (needs.in_flight ? item(fmt::format("height:0;border-top:2px solid {}", k_in_window),
                                 "most surely in flight (by the hold)") +
                                item(fmt::format("height:0;border-top:2px dashed {}", k_in_window),
                                     "most possibly in flight (send to reply)")
                          : item(fmt::format("height:0;border-top:2px solid {}", k_in_window),
                                 units ? "units admitted in the trailing window"
                                       : "admitted in the trailing window")) +
         item(fmt::format("height:0;border-top:2px dashed {}", k_contract),
              parts ? "a contract part, its colour in the bands above" : "contract") +
         item(fmt::format("background:{};border:1px solid {}", k_span_fill, k_span_stroke),
              "worst span") +
         (faults ? item(fmt::format("background:{};border:1px dashed {}", k_fault_fill,
                                    k_fault_stroke),
                        "fault (--fault)")
                 : std::string()) +
         (offered ? item(fmt::format("height:0;border-top:2px solid {}", k_offered),
                         "offered rate, sent per second (dashed: planned), right-hand scale")
                  : std::string()) +
         (needs.bans
              ? item(fmt::format("background:{};border:1px solid {}", k_ban_fill, k_ban_stroke),
                     "surely banned (--contract ban)")
              : std::string()) +
         "</p>\n";
}

namespace hist {
constexpr int width = 900, height = 200;
constexpr double left = 56, right = 876, top = 22, bottom = 150;
}  // namespace hist

}  // namespace

std::string timelines_html(const Report& report, const std::string& prefix) {
  const bool faults = std::any_of(report.runs.begin(), report.runs.end(),
                                  [](const checks::RunStats& run) { return !run.faults.empty(); });
  const bool offered = std::any_of(report.runs.begin(), report.runs.end(), [](const auto& run) {
    return run.timeline && !run.timeline->rate.empty();
  });
  const bool units = std::any_of(report.runs.begin(), report.runs.end(), [](const auto& run) {
    return run.timeline && run.timeline->in_units;
  });
  LegendNeeds needs{faults, offered, has_parts(report), units};
  for (const checks::RunStats& run : report.runs) {
    if (!run.timeline)
      continue;
    needs.in_flight = needs.in_flight || run.timeline->in_flight;
    for (const checks::TimelineSeries& series : run.timeline->series)
      needs.bans = needs.bans || !series.ban_spans.empty();
  }
  std::string out = "<h3>Timeline</h3>\n" + legend_html(needs);
  size_t drawn = 0;
  for (const checks::RunStats& run : report.runs) {
    if (drawn == k_html_timeline_runs)
      break;
    ++drawn;
    if (!run.timeline) {
      out += fmt::format("<p class=\"note\">Run {}: no timeline was recorded.</p>\n", run.run);
      continue;
    }
    const checks::Timeline& timeline = *run.timeline;
    if (timeline.identities > static_cast<int64_t>(timeline.series.size())) {
      out +=
          fmt::format("<p class=\"note\">Run {}: {} of {} identities shown, the worst first.</p>\n",
                      run.run, timeline.series.size(), timeline.identities);
    }
    for (const checks::TimelineSeries& series : timeline.series) {
      const bool is_worst = series.identity == run.contract.worst_identity;
      int64_t allowed = 0, denied = 0, errors = 0;
      for (size_t bin = 0; bin < series.allowed.size(); ++bin) {
        allowed += series.allowed[bin];
        denied += series.denied[bin];
        errors += series.errors[bin];
      }
      const std::string id = fmt::format("{}run-{}-identity-{}", prefix, run.run, series.identity);
      out += fmt::format(
          "<figure>\n<figcaption><b>Run {}</b> &middot; identity {}{} &middot; {}{} allowed, {} "
          "denied, {} errors</figcaption>\n",
          run.run, series.identity, is_worst ? " (worst span)" : "",
          timeline.in_units ? "units: " : "", allowed, denied, errors);
      out += timeline_svg(id, timeline, series, is_worst ? &run.contract.worst : nullptr,
                          limit_lines(report, timeline), run.faults);
      if (!series.wait_promised_ns.empty()) {
        out +=
            "<p class=\"note\">Each slice's longest delay beyond the unloaded latency, against "
            "the most the slow-down allows for the place in its window of the request that "
            "waited longest, or of one the delay check fails (a bar past it and the check's "
            "tolerance in red: a request of that slice waited longer than its place "
            "allows).</p>\n";
        out += wait_svg(id + "-waits", timeline, series.wait_most_ns,
                        {"slow-down-waits", series.wait_promised_ns, series.wait_allowed_ns,
                         "most delay its place in the window allows"});
      } else if (!series.wait_most_ns.empty()) {
        out +=
            "<p class=\"note\">Each slice's longest wait beyond the unloaded latency, against "
            "the wait the queue promises (a bar past it and the delay check's tolerance in "
            "red).</p>\n";
        const auto bins = series.wait_most_ns.size();
        out += wait_svg(
            id + "-waits", timeline, series.wait_most_ns,
            {"queue-waits", std::vector<int64_t>(bins, timeline.promised_wait_ns),
             std::vector<int64_t>(bins, timeline.promised_wait_ns + timeline.wait_tolerance_ns),
             fmt::format("promised wait (queue / rate): {}",
                         ms_text(static_cast<double>(timeline.promised_wait_ns) / 1e6))});
      }
      out += "</figure>\n";
    }
  }
  if (report.runs.size() > drawn) {
    const size_t left_out = report.runs.size() - drawn;
    out += fmt::format(
        "<p class=\"omitted\">{} more run{} not drawn (timelines are capped at {} runs); the "
        "table above has their figures.</p>\n",
        left_out, left_out == 1 ? "" : "s", k_html_timeline_runs);
  }
  if (report.runs.empty())
    out += "<p class=\"note\">No run finished, so there is no timeline.</p>\n";
  return out;
}

// The retry hints' errors over all runs, with the zones beyond the tolerances shaded.
std::string retry_histogram_html(const Report& report, const std::string& prefix) {
  using namespace hist;
  std::map<int64_t, int64_t> errors;  // error_ms -> hints
  int64_t judged = 0;
  int64_t early = 0, late = 0, unexplained = 0;
  for (const checks::RunStats& run : report.runs) {
    for (const auto& [error_ms, count] : run.retry_accuracy.errors.counts())
      errors[error_ms] += count;
    judged += run.retry_accuracy.errors.size();
    early += run.retry_accuracy.early;
    late += run.retry_accuracy.late;
    unexplained += run.retry_accuracy.unexplained;
  }
  std::string out = "<h3>Retry-After accuracy</h3>\n";
  if (errors.empty()) {
    out +=
        "<p class=\"no-hints\">No denial carried a usable retry hint, so there is no "
        "histogram.</p>\n";
    return out;
  }
  const int64_t early_ms = report.params.early_tolerance_ms;
  const int64_t late_ms = report.params.late_tolerance_ms;

  // Half a tolerance beyond each, so the zones show even when every hint is right.
  const double low =
      std::min(static_cast<double>(errors.begin()->first), -1.5 * static_cast<double>(early_ms));
  const double high =
      std::max(static_cast<double>(errors.rbegin()->first), 1.5 * static_cast<double>(late_ms));
  const double bin_ms = nice_step((high - low) * 1.1, 60);
  // Bins centred on multiples of bin_ms, so an exact hint sits in the bin at 0.
  const auto first = static_cast<int64_t>(std::floor(low / bin_ms + 0.5)) - 1;
  const auto last = static_cast<int64_t>(std::floor(high / bin_ms + 0.5)) + 1;
  std::map<int64_t, int64_t> counts;
  for (const auto& [error, hints] : errors)
    counts[static_cast<int64_t>(std::floor(static_cast<double>(error) / bin_ms + 0.5))] += hints;
  int64_t count_max = 1;
  for (const auto& [bin, count] : counts)
    count_max = std::max(count_max, count);

  const double from = (static_cast<double>(first) - 0.5) * bin_ms;
  const double to = (static_cast<double>(last) + 0.5) * bin_ms;
  auto x_of = [&](double ms) { return left + (ms - from) / (to - from) * (right - left); };
  auto y_of = [&](double count) {
    return bottom - count / static_cast<double>(count_max) * (bottom - top - 14);
  };

  out += fmt::format(
      "<p class=\"note\">{} hints judged over {} run{}: {} early by more than {}, {} late by "
      "more than {}{}. Error = the hint minus the nearest wait the contract predicts.</p>\n",
      judged, report.runs.size(), report.runs.size() == 1 ? "" : "s", early,
      ms_text(static_cast<double>(early_ms)), late, ms_text(static_cast<double>(late_ms)),
      unexplained > 0 ? fmt::format("; {} denials unexplained, not judged", unexplained) : "");
  out += fmt::format(
      "<svg class=\"retry-histogram\" id=\"{}retry-histogram\" "
      "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" font-size=\"11\">\n",
      prefix, width, height, width, height);
  out += fmt::format(
      "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" "
      "stroke=\"#e0e0e0\"/>\n",
      left, top, right - left, bottom - top);
  const double early_x = x_of(static_cast<double>(-early_ms));
  const double late_x = x_of(static_cast<double>(late_ms));
  out += fmt::format(
      "<rect class=\"zone-early\" x=\"{0}\" y=\"{1}\" width=\"{2:.1f}\" height=\"{3}\" "
      "fill=\"rgba(229,57,53,0.09)\"/>"
      "<text x=\"{4}\" y=\"{5}\" fill=\"{6}\">too early: denied again</text>\n"
      "<rect class=\"zone-late\" x=\"{7:.1f}\" y=\"{1}\" width=\"{8:.1f}\" height=\"{3}\" "
      "fill=\"rgba(239,108,0,0.09)\"/>"
      "<text x=\"{9}\" y=\"{5}\" text-anchor=\"end\" fill=\"{10}\">too late: waits for "
      "nothing</text>\n",
      left, top, std::max(0.0, early_x - left), bottom - top, left + 6, top + 13, k_hint_early,
      late_x, std::max(0.0, right - late_x), right - 6, k_hint_late);

  const double step = nice_step(to - from, 9);
  const bool seconds = step >= 1000;
  for (double t = std::ceil(from / step) * step; t <= to; t += step) {
    const double x = x_of(t);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\"/>"
        "<text x=\"{0:.1f}\" y=\"{4}\" text-anchor=\"middle\" fill=\"{3}\">{5}</text>\n",
        x, bottom, bottom + 4, k_axis, bottom + 16, time_label(t, seconds));
  }
  out += fmt::format(
      "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#424242\" "
      "stroke-dasharray=\"2 2\"/>\n"
      "<text x=\"{3}\" y=\"{4}\" text-anchor=\"middle\" fill=\"{5}\">hint error: told minus "
      "predicted wait (bins of {6})</text>\n",
      x_of(0), top, bottom, (left + right) / 2, bottom + 36, k_axis, ms_text(bin_ms));
  const double bar_width = std::max(1.0, x_of(bin_ms) - x_of(0) - 2);
  for (const auto& [bin, count] : counts) {
    const double centre = static_cast<double>(bin) * bin_ms;
    const std::string_view colour = centre < static_cast<double>(-early_ms) ? k_hint_early
                                    : centre > static_cast<double>(late_ms) ? k_hint_late
                                                                            : k_hint_ok;
    const double y = y_of(static_cast<double>(count));
    out += fmt::format(
        "<rect class=\"hint-bar\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
        "fill=\"{}\"><title>{} hints with error {}</title></rect>\n",
        x_of(centre) - bar_width / 2, y, bar_width, bottom - y, colour, count,
        time_label(centre, false));
    out += fmt::format(
        "<text class=\"hint-count\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" "
        "font-size=\"10\" fill=\"#424242\">{}</text>\n",
        x_of(centre), y - 3, count);
  }
  return out + "</svg>\n";
}

}  // namespace rlcheck::report::html
