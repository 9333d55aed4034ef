#pragma once
// The parts of a report that every target fills the same way: the configured load and
// limits, and the checks with their verdict.

#include <chrono>
#include <cstdint>
#include <functional>

#include "checks/checks.hpp"
#include "config/config.hpp"
#include "judging/contract_choice.hpp"
#include "report/report.hpp"

namespace rlcheck::judging {

// requests, concurrency, runs, threads, limit, window, pace and contract as configured.
report::Params configured_params(const config::Config& config, const ContractChoice& contract);

// The check parameters for `limit` (configured, or advertised), the contract and retry bounds.
checks::CheckParams check_params(const config::Config& config, int64_t limit,
                                 const ContractChoice& contract);

// The longest --verify-retry-after waits: --max-retry-after, else the window.
std::chrono::milliseconds longest_retry_wait(const config::Config& config);

// Tells stderr how long --verify-retry-after waits (not with --quiet or --hook).
std::function<void(int64_t wait_ms)> announce_wait(const config::Config& config);

// Evaluates the checks on report.runs and fills checks, verdict and summary; the verdict of an
// interrupted report is `interrupted`, whatever the checks said of its partial runs.
void judge(report::Report& report, const checks::CheckParams& params);

}  // namespace rlcheck::judging
