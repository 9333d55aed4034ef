#include "report/html_report.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/count_text.hpp"
#include "config/duration.hpp"
#include "report/human_report.hpp"
#include "report/junit_report.hpp"

namespace rlcheck::report {
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

constexpr std::string_view k_style = R"css(
body{margin:0;background:#f4f5f7;color:#212121;
 font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{width:940px;margin:0 auto;padding:14px 0 32px}
h1{font-size:19px;margin:2px 0 12px;font-weight:600}
h1 small{font-weight:400;color:#757575;font-size:13px;margin-left:8px}
section.report{background:#fff;border:1px solid #e0e0e0;border-radius:6px;padding:14px 18px;
 margin-bottom:18px}
h2{font-size:17px;margin:0 0 8px;font-weight:600}
h3{font-size:15px;margin:18px 0 6px;font-weight:600}
.badge{display:inline-block;text-transform:uppercase;font-size:12px;font-weight:700;padding:1px 9px;border-radius:10px;
 color:#fff;vertical-align:2px;margin-right:8px}
.badge.pass{background:#1b5e20}.badge.fail{background:#b71c1c}.badge.error{background:#5d4037}
.badge.interrupted{background:#e65100}
dl.params{display:grid;grid-template-columns:max-content 1fr;gap:1px 16px;margin:0 0 10px}
dl.params dt{color:#757575}dl.params dd{margin:0;overflow-wrap:anywhere}
p.verdict{margin:8px 0;padding:7px 10px;border-radius:4px;font-weight:600}
p.verdict.pass{background:#e8f5e9;color:#1b5e20}p.verdict.fail{background:#ffebee;color:#b71c1c}
p.verdict.error{background:#efebe9;color:#4e342e}
p.verdict.interrupted{background:#fff3e0;color:#e65100}
table{border-collapse:collapse;width:100%;margin:4px 0 6px;font-size:13px}
th{text-align:left;color:#616161;font-weight:600;border-bottom:1px solid #bdbdbd;padding:3px 8px}
td{padding:3px 8px;border-bottom:1px solid #eeeeee;vertical-align:top;overflow-wrap:anywhere}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.mark{width:1.2em;font-weight:700;text-align:center}
td.id{white-space:nowrap;font-family:"DejaVu Sans Mono",monospace;font-size:12px}
tr.pass td.mark{color:#1b5e20}tr.fail td.mark{color:#b71c1c}tr.fail td.id{color:#b71c1c}
tr.skip td{color:#9e9e9e}td.over{color:#b71c1c;font-weight:600}
figure{margin:6px 0 12px}
figcaption{font-size:13px;color:#424242;margin:0 0 2px}
figcaption b{font-weight:600}
svg{display:block}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
.legend{font-size:12px;color:#424242;margin:0 0 4px}
.legend span{margin-right:14px;white-space:nowrap}
.legend i{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:-1px}
p.note,p.omitted,p.no-hints{color:#616161;font-size:13px;margin:4px 0}
)css";

std::string esc(std::string_view text) {
  return xml_escape(text);
}

// 10, 10.5: a count or an allowance without noise digits.
std::string number_text(double value) {
  if (std::abs(value - std::round(value)) < 1e-6)
    return fmt::format("{}", static_cast<int64_t>(std::llround(value)));
  return fmt::format("{:.1f}", value);
}

// Three significant figures, in microseconds below a millisecond: a bin of a sub-millisecond
// run is "2.25 µs", not "0.0 ms".
std::string ms_text(double ms) {
  if (ms >= 10)
    return fmt::format("{:.0f} ms", ms);
  if (ms >= 1 || ms <= 0)
    return fmt::format("{:.3g} ms", ms);
  return fmt::format("{:.3g} µs", ms * 1000);
}

std::string window_text(int64_t window_ms) {
  return config::format_duration(std::chrono::milliseconds(window_ms));
}

// 1, 2 or 5 times a power of ten, cutting `range` into at most `parts` pieces.
double nice_step(double range, double parts) {
  if (!(range > 0))
    return 1;
  const double rough = range / parts;
  const double power = std::pow(10.0, std::floor(std::log10(rough)));
  for (double factor : {1.0, 2.0, 5.0}) {
    if (factor * power >= rough * (1 - 1e-9))
      return factor * power;
  }
  return 10 * power;
}

std::string time_label(double ms, bool seconds) {
  ms += 0.0;  // no "-0"
  return seconds ? fmt::format("{:g}s", ms / 1000.0) : fmt::format("{:g}ms", ms);
}

const char* verdict_class(checks::Verdict verdict) {
  return checks::verdict_name(verdict);
}

std::string subject_of(const Report& report) {
  if (report.mode == "http")
    return report.target.url;
  return report.target.script.empty() ? report.target.strategy : report.target.script;
}

std::string contract_label(const Report& report, double contract_line) {
  return fmt::format("contract ({}): {} per {}",
                     report.params.contract.empty() ? "sliding" : report.params.contract,
                     number_text(contract_line), window_text(report.params.window_ms));
}

std::string header_html(const Report& report) {
  const Params& p = report.params;
  std::string out =
      fmt::format("<h2><span class=\"badge {}\">{}</span>rlcheck {} &middot; {}</h2>\n",
                  verdict_class(report.verdict),
                  report.interrupted ? "INTERRUPTED" : checks::verdict_name(report.verdict),
                  esc(report.mode), esc(subject_of(report)));
  out += "<dl class=\"params\">\n";
  auto row = [&out](std::string_view name, const std::string& value) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", name, value);
  };
  row("target", esc(report.target.url) + (report.target.embedded ? " (private redis-server)" : ""));
  if (report.mode == "http") {
    row("method", esc(report.target.method));
  } else {
    row("limiter", report.target.script.empty() ? esc(report.target.strategy)
                                                : "script " + esc(report.target.script));
    if (!report.target.key.empty())
      row("key", esc(report.target.key));
  }
  std::string limit = fmt::format("{} per {}", p.limit, window_text(p.window_ms));
  if (p.limit_source == "advertised")
    limit += " (advertised by the server)";
  else if (p.limit_source == "default")
    limit += " (default)";
  row("limit", limit);
  std::string contract = esc(p.contract.empty() ? "sliding" : p.contract);
  if (p.burst)
    contract += fmt::format(", burst {}", *p.burst);
  if (!p.refill.empty())
    contract += ", refill " + esc(p.refill);
  row("contract", contract);
  const std::string runs = fmt::format("{} run{}", p.runs, p.runs == 1 ? "" : "s");
  std::string load;
  if (!p.rate.empty()) {
    load = fmt::format("{} for {} &times; {} (open model)", esc(p.rate),
                       time_label(p.duration_ms, p.duration_ms >= 1000), runs);
  } else {
    load = fmt::format("{} &times; {}, concurrency P = {}", config::counted(p.requests, "request"),
                       runs, p.concurrency);
    if (p.interval_ms > 0)
      load += fmt::format(", one every {}", ms_text(p.interval_ms));
  }
  if (p.threads > 1)
    load += fmt::format(", {} threads", p.threads);
  row("load", load);
  row("identities", std::to_string(p.identities));
  for (const checks::RunStats& run : report.runs) {
    if (run.stopped_on_errors) {
      row("stopped", fmt::format("run {} on errors, after {} of {}", run.run, run.requests,
                                 config::counted(p.requests, "request")));
    }
  }
  if (!report.keys_left.empty())
    row("keys left behind", esc(fmt::format("{}", fmt::join(report.keys_left, ", "))));
  out += "</dl>\n";
  out += fmt::format("<p class=\"verdict {}\">{}</p>\n", verdict_class(report.verdict),
                     esc(verdict_line(report)));
  return out;
}

std::string checks_html(const Report& report) {
  if (report.checks.empty())
    return "<p class=\"note\">No checks were evaluated.</p>\n";
  std::string out = "<table class=\"checks\">\n<tr><th></th><th>check</th><th>detail</th></tr>\n";
  for (const checks::CheckResult& check : report.checks) {
    const char* mark = check.status == checks::Status::pass   ? "✓"
                       : check.status == checks::Status::fail ? "✗"
                                                              : "-";
    out += fmt::format(
        "<tr class=\"{}\"><td class=\"mark\">{}</td><td class=\"id\">{}</td><td>{}</td></tr>\n",
        checks::status_name(check.status), mark, esc(check.id), esc(check.detail));
  }
  return out + "</table>\n";
}

std::string peak_text(const checks::AdmissionPeak& peak) {
  return fmt::format("{} admitted in {} (allowed {})", peak.count,
                     ms_text(static_cast<double>(peak.length_ns) / 1e6),
                     number_text(peak.allowance));
}

std::string runs_html(const Report& report) {
  std::string out =
      "<table class=\"runs\">\n<tr><th class=\"num\">run</th><th class=\"num\">requests</th>"
      "<th class=\"num\">allowed</th><th class=\"num\">denied</th><th class=\"num\">errors</th>"
      "<th>worst span</th><th class=\"num\">duration</th></tr>\n";
  for (const checks::RunStats& run : report.runs) {
    const checks::AdmissionPeak& worst = run.contract.worst;
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td{}>{}</td>"
        "<td class=\"num\">{}</td></tr>\n",
        run.run, run.requests, run.allowed, run.denied, run.errors,
        worst.exceeded() ? " class=\"over\"" : "",
        worst.count > 0
            ? fmt::format("{}, identity {}", peak_text(worst), run.contract.worst_identity)
            : "no admission",
        ms_text(run.duration_ms));
  }
  return out + "</table>\n";
}

// One identity of one run over time; fixed size so screenshots are predictable.
namespace frame {
constexpr int width = 900, height = 220;
constexpr double left = 56, right = 844, top = 30, baseline = 136, bottom = 184;
constexpr double bar_span = 44;  // the tallest bar, above and below the baseline
}  // namespace frame

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
  return out + "</svg>\n";
}

std::string legend_html(bool faults) {
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
         "</p>\n";
}

std::string timelines_html(const Report& report, const std::string& prefix) {
  const bool faults = std::any_of(report.runs.begin(), report.runs.end(),
                                  [](const checks::RunStats& run) { return !run.faults.empty(); });
  std::string out = "<h3>Timeline</h3>\n" + legend_html(faults);
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

namespace hist {
constexpr int width = 900, height = 200;
constexpr double left = 56, right = 876, top = 22, bottom = 150;
}  // namespace hist

// The retry hints' errors over all runs, with the zones beyond the tolerances shaded.
std::string histogram_html(const Report& report, const std::string& prefix) {
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

std::string report_html(const Report& report, size_t number, const std::string& prefix) {
  std::string out = fmt::format("<section class=\"report\" id=\"report-{}\">\n", number);
  out += header_html(report);
  out += "<h3>Checks</h3>\n" + checks_html(report);
  out += "<h3>Runs</h3>\n" + runs_html(report);
  out += timelines_html(report, prefix);
  out += histogram_html(report, prefix);
  return out + "</section>\n";
}

}  // namespace

std::string render_html(const std::vector<Report>& reports) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>rlcheck report</title>\n<style>";
  out += k_style;
  out += "</style>\n</head>\n<body>\n<main>\n";
  out += fmt::format("<h1>rlcheck report<small>{} target{}</small></h1>\n", reports.size(),
                     reports.size() == 1 ? "" : "s");
  for (size_t i = 0; i < reports.size(); ++i) {
    // The first report's ids are unprefixed; the others' say which report they belong to.
    const std::string prefix = i == 0 ? "" : fmt::format("report-{}-", i + 1);
    out += report_html(reports[i], i + 1, prefix);
  }
  return out + "</main>\n</body>\n</html>\n";
}

}  // namespace rlcheck::report
