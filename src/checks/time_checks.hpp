#pragma once
// The checks that audit a limiter over time: contract, delay, utilisation, retry-after-accuracy
// and retry-after-honest (checks.cpp has the per-run counts).

#include <optional>
#include <vector>

#include "checks/checks.hpp"

namespace rlcheck::checks {

CheckResult check_contract(const std::vector<RunStats>& runs, const CheckParams& params);
// --contract queue: no admitted request waited longer than the queue promises.
CheckResult check_delay(const std::vector<RunStats>& runs, const CheckParams& params);
CheckResult check_utilisation(const std::vector<RunStats>& runs, const CheckParams& params);
CheckResult check_retry_accuracy(const std::vector<RunStats>& runs, const CheckParams& params);
CheckResult check_retry_honest(const CheckParams& params,
                               const std::optional<RetryVerification>& verification);

}  // namespace rlcheck::checks
