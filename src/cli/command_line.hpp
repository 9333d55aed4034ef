#pragma once
// The command line: CLI11 wiring for every subcommand, in one place.

#include <optional>
#include <string>

#include "config/config.hpp"

namespace rlcheck::cli {

struct ParsedCommandLine {
  config::Config config;
  // Set for --help and --version: print this on stdout and exit 0 without running anything.
  std::optional<std::string> immediate_output;
};

// Throws app::FatalError(usage) with one line naming the flag.
ParsedCommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace rlcheck::cli
