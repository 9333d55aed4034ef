#pragma once
// --fault verdicts: what each fault window saw of the run's requests (measure_faults), and the
// fail-mode and recovery checks over every run's windows.

#include <vector>

#include "checks/checks.hpp"
#include "checks/fault_window.hpp"
#include "engine/record_log.hpp"
#include "engine/request_record.hpp"

namespace rlcheck::checks {

// Fills each applied window's during counts, what fail-mode and recovery judge, and
// recovered_after_ns, from the run's records (any order; instants on the run's clock). The
// span after a fault ends where the next one (by at_ns) begins, or with the run.
void measure_faults(std::vector<FaultWindow>& faults, engine::RecordView records);

// fail-mode: with --expect-fail-mode, fails when a decision made while a fault held went the
// other way (closed: allowed; open: denied or errored). Skips without it or without faults.
CheckResult check_fail_mode(const std::vector<RunStats>& runs, const CheckParams& params);

// recovery: fails when, after a fault ended, the first normal decision (allowed or denied)
// came later than --recovery, or requests still errored after that long. Skips without faults.
CheckResult check_recovery(const std::vector<RunStats>& runs, const CheckParams& params);

}  // namespace rlcheck::checks
