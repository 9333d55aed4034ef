#pragma once
// A live request counter on stderr, for people watching long runs: only when stderr is a
// terminal, never with --json, --hook or --quiet, and only once a run has lasted a second.
// When stderr is not a terminal (CI logs), a run longer than two minutes prints a status line
// a minute instead (app/status_line), except with --hook.

#include <chrono>
#include <string>

#include "config/config.hpp"
#include "engine/run.hpp"

namespace rlcheck::runner {

class ProgressLine {
 public:
  explicit ProgressLine(const config::Config& config);
  ~ProgressLine();  // clears the line it drew
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The callback for one run; empty when no progress is to be shown.
  engine::ProgressFn for_run(std::string label);

 private:
  bool enabled_;
  bool status_lines_;
  int64_t total_;
  bool drawn_ = false;
};

}  // namespace rlcheck::runner
