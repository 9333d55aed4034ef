#pragma once
// Several contracts in the HTML report (DESIGN 0.4: "HTML a band per part"): a band per part
// naming its spec, whether it held, its worst span over the runs and whether the timelines draw
// its limit; and the colour of each part's limit line on the timelines. A report of one
// contract has no bands, and its page is the same as before parts existed.
//
// Element ids and classes, beside html_report.hpp's: `div.part-band` (also `held` or
// `exceeded`) with id `part-P` (1-based, in the order given; `report-N-` before it for the
// second report on), in it `b.part-spec`, `span.part-status`, `span.part-span` and
// `span.part-line`; on the timelines `line.part-line` and `text.part-label`, each also of
// class `part-P`.

#include <cstddef>
#include <string>
#include <string_view>

#include "checks/timeline.hpp"
#include "report/report.hpp"

namespace rlcheck::report::html {

// The CSS of the bands; the page holds it only when some report has parts.
std::string_view parts_style();

// Whether some run of `report` was audited against several parts.
bool has_parts(const Report& report);

// The colour of part `index`'s (0-based) limit line and of its band's swatch; the first is the
// single contract's colour.
std::string_view part_colour(size_t index);

// A drawn part's label on a timeline: "sliding:5/1s: 5 per 1s", what one of the timeline's
// windows (`window_ns`) may hold under it.
std::string part_line_label(const checks::TimelinePart& part, int64_t window_ns);

// The "Contracts" part of a report's section: a band per part; "" for one contract. `prefix`
// goes before every id, as for the timelines.
std::string part_bands_html(const Report& report, const std::string& prefix);

}  // namespace rlcheck::report::html
