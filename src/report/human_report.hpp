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

// The promise audited, as the header names it: "limit 5 per 10s" (http: with where each came
// from when no flag gave it), or a bucket's "token-bucket burst 5, refill 5/s".
std::string contract_text(const Report& report);
// The report's first line: the target, its limiter, the contract and the load, as in
// "rlcheck redis  redis://127.0.0.1:6379  sliding-window  limit 10 per 60s  200 requests x 4 runs,
// concurrency 50".
std::string header_line(const Report& report);
// Several targets under the same load, one row each with the checks that failed; with quiet,
// one verdict line each, prefixed with the strategy or endpoint ("naive: FAIL: limit: ...").
std::string render_compare(const std::vector<Report>& reports, const TextStyle& style);
// "PASS", "FAIL: limit: 4 of 4 runs over the limit; ..." — the first failing check decides;
// "INTERRUPTED: partial results" (with what failed so far) after Ctrl-C.
std::string verdict_line(const Report& report);

}  // namespace rlcheck::report
