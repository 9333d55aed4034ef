#pragma once
// Claude Code Stop-hook mode (--hook): the hook's stdin is read and tolerated, stdout stays
// empty, and a failure is explained on stderr for the agent, with the command to reproduce.

#include <filesystem>
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

// The first word of a command Claude Code's shell runs (the hook's, or a reproduce line pasted):
// `name` only when `path_env` (a PATH value) finds this very program (`self`) by that name, since
// a bare name the shell cannot find exits 127, which does not block the stop; else `self`, the
// absolute path. Empty when `self` is empty (its path could not be read).
std::string hook_program(const char* path_env, const std::filesystem::path& self,
                         const std::string& name = "rlcheck");

// The program as a reproduce line names it, so that the line runs as pasted: `argv0` made
// absolute when it holds a slash (`./build/rlcheck` then runs from any directory), else the bare
// name when PATH finds this program by it (hook_program), else `self`'s path.
std::string pasteable_program(const std::string& argv0, const char* path_env,
                              const std::filesystem::path& self);
// pasteable_program for this process: $PATH and /proc/self/exe.
std::string this_program(const std::string& argv0);

// The command line without --hook, shell-quoted, for "reproduce:": its first word is the
// program as given (see pasteable_program), "rlcheck" when there is none.
std::string reproduce_command(const std::vector<std::string>& command_line);

// A few lines: what broke, by how much, in which run, and the command to reproduce.
std::string hook_reason(const std::vector<report::Report>& reports,
                        const std::vector<std::string>& command_line);

}  // namespace rlcheck::app
