#include "report/html_parts.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "checks/run_stats.hpp"
#include "report/html_text.hpp"
#include "report/junit_report.hpp"

namespace rlcheck::report::html {
namespace {

constexpr std::string_view k_part_band_style = R"css(
div.part-band{margin:4px 0;padding:5px 10px;border-left:4px solid #1b5e20;background:#f1f8e9;
 font-size:13px}
div.part-band.exceeded{border-left-color:#b71c1c;background:#ffebee}
div.part-band i{display:inline-block;width:18px;height:0;margin-right:6px;vertical-align:3px}
b.part-spec{font-family:"DejaVu Sans Mono",monospace;font-size:12px;margin-right:10px}
span.part-status{font-weight:700;margin-right:10px}
div.part-band.held span.part-status{color:#1b5e20}
div.part-band.exceeded span.part-status{color:#b71c1c}
span.part-line{color:#616161}
)css";

// Blue first, as one contract's line; then colours none of the timeline's other marks take.
constexpr std::array<std::string_view, 5> k_part_colours = {"#1565c0", "#ad1457", "#4e342e",
                                                            "#37474f", "#827717"};

// The run where part `index` came nearest its limit, or went furthest over it (the human
// report's choice); nullptr when no run has that part.
const checks::RunStats* worst_run_of_part(const Report& report, size_t index) {
  const checks::RunStats* worst = nullptr;
  for (const checks::RunStats& run : report.runs) {
    if (run.parts.size() <= index)
      continue;
    if (worst == nullptr ||
        run.parts[index].contract.worst.excess() > worst->parts[index].contract.worst.excess())
      worst = &run;
  }
  return worst;
}

// The first timeline that placed the parts: they are placed alike in every run.
const checks::Timeline* parts_timeline(const Report& report, size_t parts) {
  for (const checks::RunStats& run : report.runs) {
    if (run.timeline && run.timeline->parts.size() == parts)
      return &*run.timeline;
  }
  return nullptr;
}

std::string part_window_text(int64_t window_ns) {
  return window_text(window_ns / 1'000'000);
}

// Whether the timelines draw the part's limit, and if not why.
std::string part_line_text(const checks::TimelinePart& part, const checks::Timeline& timeline) {
  switch (part.fit) {
    case checks::PartLineFit::drawn:
      return fmt::format("drawn on the timelines: {} per {}", number_text(part.line),
                         part_window_text(timeline.window_ns));
    case checks::PartLineFit::other_window:
      return fmt::format(
          "not drawn on the timelines: its window ({}) is not the one they count over ({})",
          part_window_text(part.window_ns), part_window_text(timeline.window_ns));
    case checks::PartLineFit::per_group:
      return "not drawn on the timelines: it counts a group of identities, they one identity";
    case checks::PartLineFit::counts_requests:
      return "not drawn on the timelines: it counts requests, they units";
  }
  return "";
}

std::string part_span_text(const checks::RunStats& run, const checks::PartAudit& part) {
  const checks::AdmissionPeak& span = part.contract.worst;
  if (span.count == 0)
    return "no admission";
  const char* who = part.per_group ? "group" : "identity";
  const double start_ms = static_cast<double>(span.start_ns) / 1e6;
  return fmt::format(
      "most {}{} admitted in {} against {:.4g} per {}: {} {}, from {} into run {}", span.count,
      run.weighted && !part.counts_requests ? " units" : "",
      ms_text(static_cast<double>(span.length_ns) / 1e6), span.allowance, who, who,
      part.contract.worst_identity,
      start_ms >= 1000 ? fmt::format("{:.3g} s", start_ms / 1000) : ms_text(start_ms), run.run);
}

}  // namespace

std::string_view parts_style() {
  return k_part_band_style;
}

bool has_parts(const Report& report) {
  return std::any_of(report.runs.begin(), report.runs.end(),
                     [](const checks::RunStats& run) { return !run.parts.empty(); });
}

std::string_view part_colour(size_t index) {
  return k_part_colours[index % k_part_colours.size()];
}

std::string part_line_label(const checks::TimelinePart& part, int64_t window_ns) {
  return fmt::format("{}: {} per {}", part.spec, number_text(part.line),
                     part_window_text(window_ns));
}

std::string part_bands_html(const Report& report, const std::string& prefix) {
  if (!has_parts(report))
    return "";
  size_t parts = 0;
  for (const checks::RunStats& run : report.runs)
    parts = std::max(parts, run.parts.size());
  const checks::Timeline* timeline = parts_timeline(report, parts);
  std::string out = "<h3>Contracts</h3>\n";
  for (size_t p = 0; p < parts; ++p) {
    const checks::RunStats& run = *worst_run_of_part(report, p);
    const checks::PartAudit& part = run.parts[p];
    const bool over = part.contract.worst.exceeded();
    const checks::TimelinePart* drawn = timeline != nullptr ? &timeline->parts[p] : nullptr;
    const std::string swatch =
        drawn != nullptr && drawn->fit == checks::PartLineFit::drawn
            ? fmt::format("<i style=\"border-top:2px dashed {}\"></i>", part_colour(p))
            : "<i></i>";
    out += fmt::format(
        "<div class=\"part-band {}\" id=\"{}part-{}\">{}<b class=\"part-spec\">{}</b>"
        "<span class=\"part-status\">{}</span><span class=\"part-span\">{}</span>{}</div>\n",
        over ? "exceeded" : "held", prefix, p + 1, swatch, xml_escape(part.spec),
        over ? fmt::format("exceeded in run {}", run.run) : std::string("held"),
        xml_escape(part_span_text(run, part)),
        drawn != nullptr ? fmt::format("; <span class=\"part-line\">{}</span>",
                                       xml_escape(part_line_text(*drawn, *timeline)))
                         : std::string());
  }
  return out;
}

}  // namespace rlcheck::report::html
