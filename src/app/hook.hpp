#pragma once
// Claude Code Stop-hook mode (--hook): the hook's stdin is read and tolerated, stdout stays
// empty, and a failure is explained on stderr for the agent, with the command to reproduce.

#include <string>
#include <vector>

#include "report/report.hpp"

namespace rlcheck::app {

// Drains the hook's JSON from stdin when stdin is a pipe or file: absent, empty, not JSON or
// never closed (gives up after `wait_ms`) are all fine. Returns what was read.
std::string read_hook_input(int wait_ms = 1000);

// One word for a POSIX shell: as it is when it holds no special character, else in single
// quotes.
std::string shell_quote(const std::string& arg);

// The command line without --hook, shell-quoted, for "reproduce:".
std::string reproduce_command(const std::vector<std::string>& command_line);

// A few lines: what broke, by how much, in which run, and the command to reproduce.
std::string hook_reason(const std::vector<report::Report>& reports,
                        const std::vector<std::string>& command_line);

}  // namespace rlcheck::app
