#pragma once
// limit, contract and utilisation under --contract concurrency (checks/concurrency_audit): the
// most admissions surely in progress at once against the cap, and denials made while fewer than
// the cap could have been in progress.

#include <vector>

#include "checks/checks.hpp"

namespace rlcheck::checks {

CheckResult check_concurrency_limit(const std::vector<RunStats>& runs, const CheckParams& params);
CheckResult check_concurrency_contract(const std::vector<RunStats>& runs,
                                       const CheckParams& params);
// After nothing_admitted (a run that admitted nothing is judged as under any contract).
CheckResult check_concurrency_utilisation(const std::vector<RunStats>& runs,
                                          const CheckParams& params);

}  // namespace rlcheck::checks
