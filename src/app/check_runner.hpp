#pragma once
// Runs the checks a configuration asks for, and turns reports into exit codes; shared by the
// commands and by scenario suites.

#include <optional>
#include <string>
#include <vector>

#include "base/exit_code.hpp"
#include "config/config.hpp"
#include "coord/session.hpp"
#include "observe/monitor.hpp"
#include "report/records_writer.hpp"
#include "report/report.hpp"

namespace rlcheck::app {

// One report per target: the Redis strategy, each compared strategy, or each HTTP endpoint.
// With `records`, every request of every run is written to it as the run ends. A compared
// strategy that cannot start once another has been measured (Redis gone) ends the list:
// `cut_short` (if given) receives why, and the strategies left are not run. With `session`
// (many hosts: redis and http), this process is one worker of the session; only worker 0's
// report says anything. `monitor` watches every run (live counts, progress, metrics); null:
// one is made for these checks (serving the metrics --metrics-listen asks for).
std::vector<report::Report> run_checks(const config::Config& config,
                                       report::RecordsWriter* records = nullptr,
                                       std::string* cut_short = nullptr,
                                       coord::Session* session = nullptr,
                                       observe::Monitor* monitor = nullptr);

// The first --fault a run tried and could not apply, as one line naming it ("--fault
// pause@1s+1s could not be applied in run 1: ..."); nullopt when every fault was applied
// (or its run ended first).
std::optional<std::string> fault_failure(const report::Report& report);

// A report's exit code: interrupted 130, could not test 3 (also for a fault that could not
// be applied), failed 1, passed 0; with --hook 1 and 3 become 2.
base::ExitCode exit_code_of(const report::Report& report, bool hook);
// The code of a set of reports: interrupted, then could not test, then failed.
base::ExitCode overall_exit_code(const std::vector<report::Report>& reports);

}  // namespace rlcheck::app
