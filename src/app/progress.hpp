#pragma once
// A live request counter on stderr, for people watching long runs: only when stderr is a
// terminal, never with --json, --hook or --quiet, and only once a run has lasted a second.

#include <chrono>
#include <string>

#include "config/config.hpp"
#include "engine/run.hpp"

namespace rlcheck::app {

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
  int64_t total_;
  bool drawn_ = false;
};

}  // namespace rlcheck::app
