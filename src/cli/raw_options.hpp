#pragma once
// Flags as typed, before validation. CLI11 fills this; build_config() turns it into a Config
// or a usage error that names the flag.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace rlcheck::cli {

struct RawOptions {
  config::Command command = config::Command::redis;
  int64_t requests = 200;
  int64_t concurrency = 50;
  std::optional<int64_t> runs;
  std::optional<int64_t> limit;
  std::string window = "60s";
  bool exact = false;
  std::string timeout = "5s";
  int64_t max_errors = 0;
  std::optional<std::string> max_retry_after;
  bool json = false;
  std::string report_path;
  bool hook = false;
  bool quiet = false;
  std::string color = "auto";
  std::optional<std::string> seed;
  int64_t threads = 1;
  std::optional<std::string> interval;

  std::optional<std::string> redis_url;
  std::string strategy = "lua";
  std::optional<std::string> script;
  std::vector<std::string> args;
  std::optional<std::string> key;
  bool reset = false;
  std::optional<int64_t> burst;
  std::optional<std::string> refill;
  std::string strategies = "naive,lua";
};

// Checks every value and cross-flag rule; throws FatalError(usage) with one line that names
// the flag, e.g. "--requests: must be at least 1, got 0".
config::Config build_config(const RawOptions& raw);

}  // namespace rlcheck::cli
