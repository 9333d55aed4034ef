#pragma once
// The one loop that sequences a test's runs, whatever the target: before each run the
// target's preparation, then the run (alone, or as this worker's share of a test shared by
// many hosts) with its faults, its records written, the state it left read, the retry hint
// verified after the last run, clean-up; then the runs judged against each configuration the
// target offers, the first that passes reported.

#include "config/config.hpp"
#include "coord/session.hpp"
#include "engine/run.hpp"
#include "observe/monitor.hpp"
#include "report/records_writer.hpp"
#include "report/report.hpp"
#include "runner/target.hpp"

namespace rlcheck::runner {

struct RunOutputs {
  engine::RunObserver* observer = nullptr;   // told of each run's start and records
  report::RecordsWriter* records = nullptr;  // --records: every run's requests
  coord::Session* session = nullptr;         // many hosts: this worker's place in the test
  observe::Monitor* monitor =
      nullptr;  // live counts, progress, metrics (null: progress of its own)
};

// Runs `target` config.load.runs times and judges it. Throws FatalError only before the first
// run has measured anything (the target unreachable, no connection ready, faults it cannot
// take) or when its runs cannot be judged at all (Target::judgings). Once a run has started,
// what goes wrong is reported instead: a run stops sending once its errors exceed --max-errors
// (unless --fault provokes them), a later run without a connection counts its requests as
// errors. The exit code is left to the caller. Many hosts: worker 0 prepares, applies the
// faults, merges and judges; the others send their share and return an empty report, unless
// worker 0 was lost and this one takes its place.
report::Report run_test(Target& target, const config::Config& config,
                        const RunOutputs& outputs = {});

}  // namespace rlcheck::runner
