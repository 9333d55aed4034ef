#pragma once
// What judging makes of a test shared by many hosts (--workers N): the workers' clocks widen
// every time tolerance, and a lost worker's missing records leave some checks unjudged.

#include "coord/session.hpp"
#include "judging/contract_choice.hpp"
#include "report/report.hpp"

namespace rlcheck::judging {

// Many hosts: the clocks of two workers may disagree by the session's uncertainty; every time
// tolerance of the audits grows by it, so no verdict rests on it.
void widen_for_clocks(ContractChoice& contract, const coord::Session* session);

// report.workers from the session: each worker, its requests and clock, and who was lost (the
// test then could not be done: verdict error, exit 3).
void describe_workers(report::Report& report, const coord::Session* session);

}  // namespace rlcheck::judging
