#pragma once
// Claude Code Stop-hook mode (--hook): the hook's stdin is read and tolerated, stdout stays
// empty, and a failure is explained on stderr for the agent, with the command to reproduce.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace rlcheck::app {

// Drains the hook's JSON from stdin when stdin is a pipe or file: absent, empty, not JSON or
// never closed (gives up after `wait_ms`) are all fine. Returns what was read.
std::string read_hook_input(int wait_ms = 1000);

// What the hook's JSON says that rlcheck acts on. Anything unreadable reads as a first stop.
struct HookInput {
  // Claude is already continuing because a Stop hook blocked: at least one block came before.
  bool stop_hook_active = false;
  std::string session_id;  // empty when not given
};
HookInput parse_hook_input(const std::string& text);

class HookDeadline;  // app/hook_budget.hpp

// What a --hook run knows besides its configuration: the hook's JSON, and the deadline that
// stops it before Claude Code's timeout would cancel it (null: none).
struct HookContext {
  HookInput input;
  const HookDeadline* deadline = nullptr;
};

// --hook-max-blocks: consecutive blocks need a memory between two runs of the hook, and
// stop_hook_active alone only says "at least one". So each session (session_id) and command
// line keep a count in a small file, in $XDG_RUNTIME_DIR (else the temp directory): read only
// while stop_hook_active is true (false: the agent stopped or the user spoke since, the chain of
// blocks starts again), written at each block, removed at a pass or when the cap lets the stop
// go. Without a session_id, or when the file is gone, stop_hook_active true counts as one block.
class BlockCounter {
 public:
  BlockCounter(const HookInput& input, const std::string& command, std::filesystem::path dir);
  // The state directory of this process ($XDG_RUNTIME_DIR, else the temp directory).
  static std::filesystem::path default_dir();

  int64_t before() const { return before_; }  // consecutive blocks before this stop
  void blocked();                             // this stop is blocked too
  void cleared();                             // the chain of blocks ended

 private:
  std::filesystem::path file_;  // empty: no session_id, nothing kept
  int64_t before_ = 0;
};

// A hook's exit code with --hook-max-blocks applied: a block (2) once `max_blocks` consecutive
// blocks came before is exit 0, and `err` (the failure) is prefixed with a note saying why the
// stop goes; `counter` is updated either way. Without a cap, the code as it was.
int cap_blocks(std::optional<int64_t> max_blocks, BlockCounter& counter, int exit_code,
               std::string& err);

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
