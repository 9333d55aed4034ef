#pragma once
// The HTML report (--html): one self-contained HTML5 page, inline CSS and inline SVG only, no
// script and nothing fetched, so it opens anywhere and can be attached to a CI run. Per report:
// the header, the verdict, the checks, a timeline per run and shown identity (allowed above the
// baseline, denied below, admissions in the window against the contract, the worst span
// highlighted), and a histogram of the retry hints' errors. The charts are drawn by
// report/html_charts, the numbers in them and in the tables written by report/html_text.
//
// Element ids and classes are stable, for tests and for people who style the page:
// `svg.timeline#run-R-identity-I` (`report-N-` before it for the second report on), in it
// `rect.plot-area`, `path.bars-allowed`, `path.bars-denied`, `path.bars-errors`,
// `polyline.in-window`, `line.contract-line`, `text.contract-label`, `rect.worst-span`, and
// for the open model `polyline.offered-rate` and `polyline.planned-rate` (a point per rate
// bin, checks/offered_rate); `svg.retry-histogram`, or `p.no-hints` when no denial carried a
// usable hint; compare's `section.compare` holding `table.compare`, a `tr.target` per target.
// Several contracts add a band per part and a limit line per drawable part (report/html_parts
// lists their classes); under --cost the timelines count units and say so.

#include <string>
#include <vector>

#include "report/report.hpp"

namespace rlcheck::report {

// At most this many runs of a report get timelines; the page says how many were left out.
inline constexpr size_t k_html_timeline_runs = 8;

// Runs without a timeline (no --html when they were summarised) show their figures only.
std::string render_html(const std::vector<Report>& reports);
// `rlcheck compare --html`: the same page, the targets side by side in a table at its top
// (report/html_compare).
std::string render_compare_html(const std::vector<Report>& reports);

}  // namespace rlcheck::report
