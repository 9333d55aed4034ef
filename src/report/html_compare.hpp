#pragma once
// The top of `rlcheck compare --html`: the targets side by side, one row each, with the
// columns of the terminal's table (report/compare_row), before each target's own section.

#include <string>
#include <vector>

#include "report/report.hpp"

namespace rlcheck::report::html {

// `section.compare#compare` holding `table.compare`: a header row, then a `tr.target` per
// report, in order, its class also its verdict's (pass, fail, error, interrupted).
std::string compare_table_html(const std::vector<Report>& reports);

}  // namespace rlcheck::report::html
