#pragma once
// The charts of the HTML report, inline SVG: a timeline per run and shown identity (allowed
// above the baseline, denied below, admissions in the window against the contract, the worst
// span and the applied faults shaded) with its legend, and the histogram of the retry hints'
// errors. Element ids and classes are those html_report.hpp lists.

#include <string>

#include "report/report.hpp"

namespace rlcheck::report::html {

// The "Timeline" part of a report's section: the legend, then a figure per drawn run (at most
// k_html_timeline_runs) and shown identity, or a note saying why there is none. `prefix` goes
// before every id ("" for the first report, "report-N-" for the others).
std::string timelines_html(const Report& report, const std::string& prefix);

// The "Retry-After accuracy" part: the histogram of every run's hint errors, with the zones
// beyond the tolerances shaded, or a note that no denial carried a usable hint.
std::string retry_histogram_html(const Report& report, const std::string& prefix);

}  // namespace rlcheck::report::html
