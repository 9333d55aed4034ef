#pragma once
// The report people read: a header, a row per run, a summary, a line per check, the verdict.

#include <string>
#include <vector>

#include "report/report.hpp"

namespace rlcheck::report {

struct TextStyle {
  bool color = false;
  bool quiet = false;  // the verdict line only
};

std::string render_human(const Report& report, const TextStyle& style);
// Several targets under the same load, one row each.
std::string render_compare(const std::vector<Report>& reports, const TextStyle& style);
// "PASS", "FAIL: limit: 4 of 4 runs over the limit; ..." — the first failing check decides.
std::string verdict_line(const Report& report);

}  // namespace rlcheck::report
