#pragma once
// The `rlcheck serve` a scenario names ("serve": {...}): started from this same binary on a
// free loopback port for the scenario's run, and stopped after it. The scenario's URL says
// where with {serve}: "url": "{serve}/api".

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "process/child_process.hpp"

namespace rlcheck::app {

class ScenarioServer {
 public:
  // Starts `rlcheck serve --listen 127.0.0.1:0 <serve_args>` and waits (at most a few seconds)
  // for the line that says where it listens. On error, why, with what it printed.
  static std::expected<std::unique_ptr<ScenarioServer>, std::string> start(
      const std::vector<std::string>& serve_args);

  const std::string& url() const { return url_; }  // "http://127.0.0.1:PORT", no slash

 private:
  ScenarioServer(process::ChildProcess child, std::string url)
      : child_(std::move(child)), url_(std::move(url)) {}
  process::ChildProcess child_;  // stopped (SIGTERM) by its destructor
  std::string url_;
};

// `text` with every {serve} replaced by `url`.
std::string with_serve_url(std::string text, const std::string& url);

}  // namespace rlcheck::app
