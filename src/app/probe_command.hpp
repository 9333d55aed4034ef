#pragma once
// `rlcheck probe`: infers a limiter's contract from outside (the sequence of requests is
// described in docs/probe.md) and compares it with what the headers advertise.

#include "config/config.hpp"
#include "probe/probe_sender.hpp"
#include "report/probe_report.hpp"

namespace rlcheck::app {

using probe::ProbeSender;

// Runs the probe sequence against `target` until it can tell or the deadline passes (the
// budget that began at `started`). No request is sent after the deadline and none is awaited
// past it; when what is known (the first denial's hint, the window) says the rest cannot fit,
// it stops at once and names the --max-time that would do. Never throws for what the limiter
// does; a request error, the budget or Ctrl-C end it with the algorithm "unknown" and the
// reason.
checks::InferredContract infer_contract(ProbeSender& target, ProbeSender::Clock::time_point started,
                                        ProbeSender::Clock::time_point deadline);

// The whole command: probes, prints the human report or rlcheck.probe/v1, and returns the exit
// code: 0 it could tell, 1 what it saw contradicts the headers, 3 it could not tell, 130
// interrupted.
int run_probe(const config::Config& config);

}  // namespace rlcheck::app
