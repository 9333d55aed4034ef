#include "report/html_charts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include <fmt/format.h>

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

std::string esc(std::string_view text) {
  return xml_escape(text);
}

std::string contract_label(const Report& report, double contract_line) {
  return fmt::format("contract ({}): {} per {}",
                     report.params.contract.empty() ? "sliding" : report.params.contract,
                     number_text(contract_line), window_text(report.params.window_ms));
}

// One identity of one run over time; fixed size so screenshots are predictable.
namespace frame {
constexpr int width = 900, height = 220;
constexpr double left = 56, right = 844, top = 30, baseline = 136, bottom = 184;
constexpr double bar_span = 44;  // the tallest bar, above and below the baseline
}  // namespace frame

// The open model: requests sent per second over every identity (solid) and the rate planned
// (dashed), on a second axis of their own over the upper half, its scale on the right. The
// timeline's bins are too fine for a rate (a bin holds 0 or 1 request at a few hundred a
// second), so the lines average groups of bins: about k_rate_points points across the plot.
constexpr size_t k_rate_points = 50;

template <typename XOf, typename BinStart>
std::string offered_rate_svg(const checks::Timeline& timeline, const XOf& x_of,
                             const BinStart& bin_start, double duration) {
  using namespace frame;
  if (timeline.offered.empty())
    return "";
  const size_t group = std::max<size_t>(1, timeline.offered.size() / k_rate_points);
  const auto averaged = [&](const std::vector<double>& values) {
    std::vector<double> out;
    for (size_t first = 0; first < values.size() && bin_start(first) < duration; first += group) {
      const size_t end = std::min(values.size(), first + group);
      double sum = 0;
      for (size_t bin = first; bin < end; ++bin)
        sum += values[bin];
      out.push_back(sum / static_cast<double>(end - first));
    }
    return out;
  };
  const std::vector<double> offered = averaged(timeline.offered);
  const std::vector<double> planned = averaged(timeline.planned);
  double peak = 1;
  for (double value : offered)
    peak = std::max(peak, value);
  for (double value : planned)
    peak = std::max(peak, value);
  const double rate_max = peak * 1.12;
  auto rate_y = [&](double value) { return baseline - value / rate_max * (baseline - top); };
  const auto polyline = [&](const std::vector<double>& values) {
    std::string points;
    for (size_t point = 0; point < values.size(); ++point) {
      const double first = bin_start(point * group);
      const double middle = (first + std::min(bin_start((point + 1) * group), duration)) / 2;
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x_of(middle),
                            rate_y(values[point]));
    }
    return points;
  };
  std::string out = fmt::format(
      "<polyline class=\"offered-rate\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" "
      "stroke-linejoin=\"round\" points=\"{}\"/>\n",
      k_offered, polyline(offered));
  if (!planned.empty()) {
    out += fmt::format(
        "<polyline class=\"planned-rate\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.2\" "
        "stroke-dasharray=\"4 3\" points=\"{}\"/>\n",
        k_offered, polyline(planned));
  }
  // The scale, kept below the top of the plot where the contract's label may be.
  const double step = nice_step(rate_max, 4);
  for (double v = step; v <= rate_max * 0.85; v += step) {
    out += fmt::format(
        "<text class=\"rate-axis\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">{}/s"
        "</text>\n",
        right - 4, rate_y(v) + 4, k_offered, number_text(v));
  }
  out += fmt::format(
      "<text class=\"rate-label\" x=\"{}\" y=\"{}\" fill=\"{}\">offered rate, sent per second "
      "(dashed: planned)</text>\n",
      left, height - 3, k_offered);
  return out;
}

std::string timeline_svg(const std::string& id, const checks::Timeline& timeline,
                         const checks::TimelineSeries& series, const checks::AdmissionPeak* worst,
                         const std::string& contract_text,
                         const std::vector<checks::FaultWindow>& faults) {
  using namespace frame;
  const double duration = static_cast<double>(std::max<int64_t>(timeline.duration_ns, 1));
  const double plot_width = right - left;
  auto x_of = [&](double ns) { return left + std::clamp(ns / duration, 0.0, 1.0) * plot_width; };
  const size_t bins = series.allowed.size();
  auto bin_start = [&](size_t bin) {
    return static_cast<double>(bin) * static_cast<double>(timeline.bin_ns);
  };

  uint32_t bar_max = 1, line_peak = 0;
  for (size_t bin = 0; bin < bins; ++bin) {
    bar_max = std::max({bar_max, series.allowed[bin], series.denied[bin] + series.errors[bin]});
    line_peak = std::max(line_peak, series.in_window[bin]);
  }
  const double line_max =
      std::max(1.0, std::max(timeline.contract_line, static_cast<double>(line_peak)) * 1.12);
  auto line_y = [&](double value) { return baseline - value / line_max * (baseline - top); };
  auto bar_h = [&](uint32_t count) { return static_cast<double>(count) / bar_max * bar_span; };

  std::string out = fmt::format(
      "<svg class=\"timeline\" id=\"{}\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" font-size=\"11\">\n",
      id, width, height, width, height);
  out += fmt::format(
      "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" "
      "stroke=\"#e0e0e0\"/>\n",
      left, top, plot_width, bottom - top);

  // Time axis: vertical grid lines and labels.
  const double duration_ms = duration / 1e6;
  const bool seconds = duration_ms >= 2000;
  const double step_ms = nice_step(duration_ms, 8);
  for (double t = 0; t <= duration_ms * (1 + 1e-9); t += step_ms) {
    const double x = x_of(t * 1e6);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\"/>"
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{2}\" y2=\"{4}\" stroke=\"{5}\"/>"
        "<text x=\"{0:.1f}\" y=\"{6}\" text-anchor=\"middle\" fill=\"{5}\">{7}</text>\n",
        x, top, bottom, k_grid, bottom + 4, k_axis, bottom + 17, time_label(t, seconds));
  }
  // Left axis: admissions in the window.
  const double line_step = nice_step(line_max, 4);
  for (double v = line_step; v <= line_max; v += line_step) {
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>"
        "<text x=\"{4}\" y=\"{5:.1f}\" text-anchor=\"end\" fill=\"{6}\">{7}</text>\n",
        left, right, line_y(v), k_grid, left - 6, line_y(v) + 4, k_in_window, number_text(v));
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">0</text>"
      "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" fill=\"{}\">"
      "in window</text>\n",
      left - 6, baseline + 4, k_axis, (top + baseline) / 2, k_in_window);
  // Right axis: requests per bin, the same scale above and below the baseline.
  out += fmt::format(
      "<text x=\"{0}\" y=\"{1:.1f}\" fill=\"{3}\">{4}</text>"
      "<text x=\"{0}\" y=\"{2:.1f}\" fill=\"{3}\">{4}</text>"
      "<text transform=\"translate({5} {6}) rotate(90)\" text-anchor=\"middle\" fill=\"{3}\">"
      "per {7} bin</text>\n",
      right + 5, baseline - bar_span + 4, baseline + bar_span + 4, k_axis, bar_max, width - 14,
      (top + bottom) / 2, ms_text(static_cast<double>(timeline.bin_ns) / 1e6));

  // The worst span, behind the bars so they keep their colours.
  if (worst != nullptr && worst->count > 0) {
    const double x0 = x_of(static_cast<double>(worst->start_ns));
    const double x1 = x_of(static_cast<double>(worst->start_ns + worst->length_ns));
    const double label_x = std::clamp((x0 + x1) / 2, left + 130, right - 130);
    out += fmt::format(
        "<rect class=\"worst-span\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
        "fill=\"{}\" stroke=\"{}\"/>\n"
        "<text class=\"worst-span-label\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" "
        "font-size=\"12\" font-weight=\"600\" fill=\"{}\">{}</text>\n",
        x0, top, std::max(x1 - x0, 1.0), bottom - top, k_span_fill, k_span_stroke, label_x, top - 9,
        k_span_text, esc(peak_text(*worst)));
  }

  // Each applied fault as a translucent band with its spec, behind the bars like the span; an
  // instant fault (kill-clients) still gets a visible sliver.
  for (const checks::FaultWindow& fault : faults) {
    if (!fault.applied)
      continue;
    const double x0 = x_of(static_cast<double>(fault.at_ns));
    const double x1 = x_of(static_cast<double>(std::max(fault.until_ns, fault.at_ns)));
    out += fmt::format(
        "<rect class=\"fault\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
        "fill=\"{}\" stroke=\"{}\" stroke-dasharray=\"3 2\"><title>{}</title></rect>\n"
        "<text class=\"fault-label\" x=\"{:.1f}\" y=\"{}\" font-size=\"11\" "
        "font-weight=\"600\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"3\" "
        "paint-order=\"stroke\">{}</text>\n",
        x0, top, std::max(x1 - x0, 3.0), bottom - top, k_fault_fill, k_fault_stroke,
        esc(fault.spec), std::min(x0 + 3, right - 90), top + 13, k_fault_text, esc(fault.spec));
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
  const double contract_y = line_y(timeline.contract_line);
  out += fmt::format(
      "<line class=\"contract-line\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
      "stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>\n",
      left, right, contract_y, k_contract);
  std::string points = fmt::format("{},{}", left, baseline);
  for (size_t bin = 0; bin < bins && bin_start(bin) < duration; ++bin) {
    points +=
        fmt::format(" {:.1f},{:.1f}", x_of(bin_start(bin + 1)), line_y(series.in_window[bin]));
  }
  out += fmt::format(
      "<polyline class=\"in-window\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" "
      "stroke-linejoin=\"round\" points=\"{}\"/>\n",
      k_in_window, points);
  out += fmt::format(
      "<text class=\"contract-label\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\" "
      "stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>\n",
      right - 4, contract_y - 5, k_contract, esc(contract_text));
  out += offered_rate_svg(timeline, x_of, bin_start, duration);
  return out + "</svg>\n";
}

std::string legend_html(bool faults, bool offered) {
  auto item = [](std::string_view style, std::string_view text) {
    return fmt::format("<span><i style=\"{}\"></i>{}</span>", style, text);
  };
  return "<p class=\"legend\">" + item(fmt::format("background:{}", k_allowed), "allowed (up)") +
         item(fmt::format("background:{}", k_denied), "denied (down)") +
         item(fmt::format("background:{}", k_errors), "errors") +
         item(fmt::format("height:0;border-top:2px solid {}", k_in_window),
              "admitted in the trailing window") +
         item(fmt::format("height:0;border-top:2px dashed {}", k_contract), "contract") +
         item(fmt::format("background:{};border:1px solid {}", k_span_fill, k_span_stroke),
              "worst span") +
         (faults ? item(fmt::format("background:{};border:1px dashed {}", k_fault_fill,
                                    k_fault_stroke),
                        "fault (--fault)")
                 : std::string()) +
         (offered ? item(fmt::format("height:0;border-top:2px solid {}", k_offered),
                         "offered rate, sent per second (dashed: planned), right-hand scale")
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
    return run.timeline && !run.timeline->offered.empty();
  });
  std::string out = "<h3>Timeline</h3>\n" + legend_html(faults, offered);
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
          "<figure>\n<figcaption><b>Run {}</b> &middot; identity {}{} &middot; {} allowed, {} "
          "denied, {} errors</figcaption>\n",
          run.run, series.identity, is_worst ? " (worst span)" : "", allowed, denied, errors);
      out += timeline_svg(id, timeline, series, is_worst ? &run.contract.worst : nullptr,
                          contract_label(report, timeline.contract_line), run.faults);
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
