#pragma once
// Parsing a command line the way main() does, for the tests of the CLI.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/exit_code.hpp"
#include "cli/command_line.hpp"

namespace rlcheck::testing {

inline cli::ParsedCommandLine parse_arguments(std::vector<const char*> args) {
  args.insert(args.begin(), "rlcheck");
  return cli::parse_command_line(static_cast<int>(args.size()), args.data());
}

// The message of the usage error (exit 64, one line) the arguments must raise.
inline std::string usage_error(std::vector<const char*> args) {
  try {
    parse_arguments(std::move(args));
  } catch (const base::FatalError& error) {
    CHECK(error.code() == base::ExitCode::usage);
    const std::string message = error.what();
    CHECK(message.find('\n') == std::string::npos);
    return message;
  }
  FAIL("no usage error");
  return {};
}

inline bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace rlcheck::testing
