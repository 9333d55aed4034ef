#include "report/html_report.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/count_text.hpp"
#include "report/html_charts.hpp"
#include "report/html_compare.hpp"
#include "report/html_parts.hpp"
#include "report/html_text.hpp"
#include "report/human_report.hpp"
#include "report/junit_report.hpp"

namespace rlcheck::report {
namespace {

using html::ms_text;
using html::number_text;
using html::peak_text;
using html::time_label;
using html::window_text;

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
table.compare td.name{font-weight:600;white-space:nowrap}
table.compare td.failed{font-family:"DejaVu Sans Mono",monospace;font-size:12px;color:#b71c1c}
table.compare tr.pass td.failed{color:#9e9e9e}
table.compare .badge{margin:0;font-size:11px}
)css";

std::string esc(std::string_view text) {
  return xml_escape(text);
}

const char* verdict_class(checks::Verdict verdict) {
  return checks::verdict_name(verdict);
}

std::string subject_of(const Report& report) {
  return report.target.name;
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
  for (const auto& [name, value] : report.target.rows)
    row(name, esc(value));
  // A cap has no window: it counts requests in progress.
  std::string limit = p.contract.starts_with("concurrency")
                          ? fmt::format("at most {} in progress at once", p.limit)
                          : fmt::format("{} per {}", p.limit, window_text(p.window_ms));
  if (p.limit_source == "advertised")
    limit += " (advertised by the server)";
  else if (p.limit_source == "default")
    limit += " (default)";
  row("limit", limit);
  std::string contract = esc(p.contract.empty() ? "sliding" : p.contract);
  if (p.burst)
    contract += fmt::format(", burst {}", *p.burst);
  if (p.queue)
    contract += fmt::format(", queue {}", *p.queue);
  if (!p.refill.empty())
    contract += ", refill " + esc(p.refill);
  row("contract", contract);
  const std::string runs = fmt::format("{} run{}", p.runs, p.runs == 1 ? "" : "s");
  std::string load;
  if (!p.rate.empty()) {
    load = fmt::format("{} for {} &times; {} (open model)", esc(p.rate),
                       time_label(p.duration_ms, p.duration_ms >= 1000), runs);
  } else if (!p.stages.empty()) {
    std::string stages;
    for (const StageParam& stage : p.stages) {
      stages += fmt::format("{}{} to {}/s", stages.empty() ? "" : ", ",
                            time_label(stage.duration_ms, stage.duration_ms >= 1000),
                            number_text(stage.target_per_s));
    }
    load = fmt::format("stages {} ({}) &times; {} (open model)", stages,
                       config::counted(p.requests, "request"), runs);
  } else {
    load = fmt::format("{} &times; {}, concurrency P = {}", config::counted(p.requests, "request"),
                       runs, p.concurrency);
    if (p.interval_ms > 0)
      load += fmt::format(", one every {}", ms_text(p.interval_ms));
  }
  if (p.arrivals == "poisson")
    load += ", poisson arrivals";
  if (p.threads > 1)
    load += fmt::format(", {} threads", p.threads);
  row("load", load);
  row("identities", p.identity_dist == "uniform"
                        ? std::to_string(p.identities)
                        : fmt::format("{}, {}", p.identities, esc(p.identity_dist)));
  if (const std::string note = clock_note(report); !note.empty())
    row("virtual clock", esc(note) + " (the charts' time axis is virtual)");
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

std::string report_html(const Report& report, size_t number, const std::string& prefix) {
  std::string out = fmt::format("<section class=\"report\" id=\"report-{}\">\n", number);
  out += header_html(report);
  out += "<h3>Checks</h3>\n" + checks_html(report);
  out += "<h3>Runs</h3>\n" + runs_html(report);
  out += html::part_bands_html(report, prefix);
  out += html::timelines_html(report, prefix);
  out += html::retry_histogram_html(report, prefix);
  return out + "</section>\n";
}

// The page: `top` (compare's table, or nothing), then a section per report.
std::string page_html(const std::vector<Report>& reports, const std::string& top) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>rlcheck report</title>\n<style>";
  out += k_style;
  if (std::any_of(reports.begin(), reports.end(), html::has_parts))
    out += html::parts_style().substr(1);  // after k_style's own line break
  out += "</style>\n</head>\n<body>\n<main>\n";
  out += fmt::format("<h1>rlcheck report<small>{} target{}</small></h1>\n", reports.size(),
                     reports.size() == 1 ? "" : "s");
  out += top;
  for (size_t i = 0; i < reports.size(); ++i) {
    // The first report's ids are unprefixed; the others' say which report they belong to.
    const std::string prefix = i == 0 ? "" : fmt::format("report-{}-", i + 1);
    out += report_html(reports[i], i + 1, prefix);
  }
  return out + "</main>\n</body>\n</html>\n";
}

}  // namespace

std::string render_html(const std::vector<Report>& reports) {
  return page_html(reports, "");
}

std::string render_compare_html(const std::vector<Report>& reports) {
  return page_html(reports, html::compare_table_html(reports));
}

}  // namespace rlcheck::report
