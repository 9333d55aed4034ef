#pragma once
// The `rlcheck serve` a scenario names ("serve": {...}): started from this same binary on a
// free loopback port for the scenario's run, and stopped after it. The scenario's URL says
// where with {serve}: "url": "{serve}/api"; {serve-redis} is the Redis it decides with (for
// --limiter-redis, so a --fault acts on serve's Redis).

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "process/child_process.hpp"

namespace rlcheck::suite {

class ScenarioServer {
 public:
  // Starts `rlcheck serve --listen 127.0.0.1:0 <serve_args>` and waits (at most a few seconds)
  // for the line that says where it listens. On error, why, with what it printed.
  static std::expected<std::unique_ptr<ScenarioServer>, std::string> start(
      const std::vector<std::string>& serve_args);

  const std::string& url() const { return url_; }  // "http://127.0.0.1:PORT", no slash
  // serve's Redis: its --redis, else $REDIS_URL, else what it printed (a private server).
  const std::string& redis_url() const { return redis_url_; }

 private:
  ScenarioServer(process::ChildProcess child, std::string url, std::string redis_url)
      : child_(std::move(child)), url_(std::move(url)), redis_url_(std::move(redis_url)) {}
  process::ChildProcess child_;  // stopped (SIGTERM) by its destructor
  std::string url_;
  std::string redis_url_;
};

// `text` with every {serve} replaced by `url` and every {serve-redis} by `redis_url`.
std::string with_serve_url(std::string text, const std::string& url,
                           const std::string& redis_url = "");

}  // namespace rlcheck::suite
