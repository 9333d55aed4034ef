#pragma once
// limit, contract, utilisation and delay under --contract slow-down (checks/slow_down_audit): a
// slow-down admits every request, later the more a window holds. `delay` fails a request held
// longer than any position its window could have given it allows; `contract` one answered
// sooner than its least position promises; `utilisation` any denial (a slow-down promises none).

#include <vector>

#include "checks/checks.hpp"

namespace rlcheck::checks {

CheckResult check_slow_down_limit(const std::vector<RunStats>& runs, const CheckParams& params);
CheckResult check_slow_down_contract(const std::vector<RunStats>& runs, const CheckParams& params);
CheckResult check_slow_down_utilisation(const std::vector<RunStats>& runs,
                                        const CheckParams& params);
CheckResult check_slow_down_delay(const std::vector<RunStats>& runs, const CheckParams& params);

}  // namespace rlcheck::checks
