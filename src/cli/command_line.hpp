#pragma once
// The command line: CLI11 wiring for every subcommand, in one place.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace rlcheck::cli {

struct ParsedCommandLine {
  config::Config config;
  // Set for --help and --version: print this on stdout and exit 0 without running anything.
  std::optional<std::string> immediate_output;
};

// Throws app::FatalError(usage) with one line naming the flag.
ParsedCommandLine parse_command_line(int argc, const char* const* argv);

// Whether `subcommand` has an option --long_name, and whether it takes a value: scenario
// files use the long option names as keys.
enum class OptionKind { none, flag, value };
OptionKind option_kind(std::string_view subcommand, std::string_view long_name);

// The long option names of `subcommand` ("requests", "concurrency", ...), for suggestions.
std::vector<std::string> option_names(std::string_view subcommand);

// Whether the value of --long_name is a file path (--script, --report, --html...): scenario
// files resolve these against their own folder, and usage errors say "expected a file name".
bool names_a_file(std::string_view long_name);

}  // namespace rlcheck::cli
