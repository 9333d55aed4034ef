#include "report/html_compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/compare_row.hpp"
#include "report/human_report.hpp"
#include "report/junit_report.hpp"

namespace rlcheck::report::html {

std::string compare_table_html(const std::vector<Report>& reports) {
  if (reports.empty())
    return "";
  const bool own_limits = reports.front().target.advertises_limits;
  std::string out = "<section class=\"report compare\" id=\"compare\">\n<h2>Side by side</h2>\n";
  // Strategies share the limit they are driven with; endpoints may each advertise their own,
  // so theirs goes in a column of its own.
  if (!own_limits) {
    out += fmt::format(
        "<p class=\"note\">{}{}</p>\n",
        shared_url(reports) ? xml_escape(reports.front().target.url) + " &middot; " : std::string(),
        xml_escape(contract_text(reports.front())));
  }
  out += fmt::format(
      "<table class=\"compare\">\n<tr><th>{}</th>{}<th class=\"num\">allowed min/med/max</th>"
      "<th class=\"num\">over</th><th class=\"num\">retry hint s</th><th class=\"num\">p50 ms"
      "</th><th class=\"num\">p99 ms</th><th class=\"num\">req/s</th><th>verdict</th>"
      "<th>failed checks</th></tr>\n",
      xml_escape(reports.front().target.noun), own_limits ? "<th>limit</th>" : "");
  for (const Report& report : reports) {
    const CompareRow row = compare_row(report);
    const char* verdict = report.interrupted ? "interrupted" : checks::verdict_name(report.verdict);
    out += fmt::format(
        "<tr class=\"target {0}\"><td class=\"name\">{1}</td>{2}<td class=\"num\">{3}</td>"
        "<td class=\"num\">{4}</td><td class=\"num\">{5}</td><td class=\"num\">{6}</td>"
        "<td class=\"num\">{7}</td><td class=\"num\">{8:.0f}</td><td><span class=\"badge {0}\">"
        "{9}</span></td><td class=\"failed\">{10}</td></tr>\n",
        verdict, xml_escape(row.name),
        own_limits ? fmt::format("<td class=\"limit\">{}</td>", xml_escape(row.limit)) : "",
        row.allowed, row.over, row.retry_hint, histogram_text(row.p50_ms),
        histogram_text(row.p99_ms), row.requests_per_second, verdict,
        row.failed_checks.empty()
            ? "-"
            : xml_escape(fmt::format("{}", fmt::join(row.failed_checks, ", "))));
  }
  return out + "</table>\n</section>\n";
}

}  // namespace rlcheck::report::html
