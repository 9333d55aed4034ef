#pragma once
// The `slo` check of a --find-max test: the highest rate the search found within the SLO, or
// why none could be named.

#include "checks/checks.hpp"
#include "report/find_max_report.hpp"
#include "report/report.hpp"

namespace rlcheck::judging {

checks::CheckResult slo_check(const report::FindMax& search);

}  // namespace rlcheck::judging
