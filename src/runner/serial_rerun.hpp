#pragma once
// An over-admission is diagnosed by experiment, not by its look. After a test whose runs
// admitted more than the contract allows, the same limiter is asked again one request at a time
// on state no run met (a serial rerun: one connection, one request in flight). Within the
// contract one at a time, the excess needed requests in flight together: a check-then-act
// race. Over it even so, the limiter's own count allows that many, concurrency or not: no race.

#include <optional>
#include <vector>

#include "config/config.hpp"
#include "judging/contract_choice.hpp"
#include "report/report.hpp"
#include "runner/target.hpp"

namespace rlcheck::runner {

// Whether the judged `report` of `target` calls for a serial rerun, and can have one: `limit`
// failed in a run that admitted more than `contract`'s capacity in flight at once, on one host,
// with no --fault, --find-max or --virtual-clock, and a run numbered after the last meets fresh
// state.
bool wants_serial_rerun(const report::Report& report, const config::Config& config,
                        const Target& target, const judging::ContractChoice& contract);

// Runs it as run `run` (one after the last), judged by `contract`; nullopt when Ctrl-C came or
// every request errored. The keys it wrote are cleaned up (those that could not be join `left`).
std::optional<report::SerialRerun> rerun_serially(Target& target, const config::Config& config,
                                                  const judging::ContractChoice& contract,
                                                  const report::Report& report, int run,
                                                  std::vector<std::string>& left);

// Adds what the serial rerun showed to the detail of the over-admission checks that failed.
void note_serial_rerun(report::Report& report, const report::SerialRerun& serial);

}  // namespace rlcheck::runner
