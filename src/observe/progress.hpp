#pragma once
// The status of a run in progress on stderr, for people watching long runs. On a terminal
// (never with --json, --hook or --quiet) a line redrawn four times a second once a run has
// lasted a second; elsewhere (CI logs) a line per --progress-interval (runner/status_line),
// except with --hook. The counts come from the live stats the workers write.

#include <chrono>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "engine/live_stats.hpp"
#include "engine/run.hpp"

namespace rlcheck::observe {

class ProgressLine {
 public:
  ProgressLine(const config::Config& config, const engine::LiveStats& live);
  ~ProgressLine();  // clears the line it drew
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The callback for one run of `load` (the load this process sends); empty when no progress
  // is to be shown.
  engine::ProgressFn for_run(std::string label, const config::LoadConfig& load);
  // Erases the line drawn on the terminal, if any (a run ended).
  void clear();

 private:
  const engine::LiveStats& live_;
  bool enabled_;
  bool status_lines_;
  std::optional<config::Nanos> interval_;
  int64_t total_;
  bool drawn_ = false;
};

}  // namespace rlcheck::observe
