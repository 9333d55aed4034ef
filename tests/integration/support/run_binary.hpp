#pragma once
// Runs the built rlcheck binary as a user would, capturing what it prints and its exit code.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace rlcheck::testing {

struct ProcessOutcome {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
  bool timed_out = false;
  bool interrupted = false;  // RunOptions::interrupt_on_stderr was seen and SIGINT sent
};

enum class StdinMode { closed, empty, text };

struct RunOptions {
  StdinMode stdin_mode = StdinMode::empty;
  std::string stdin_text;                  // with StdinMode::text
  std::map<std::string, std::string> env;  // added to (or replacing) the environment
  std::vector<std::string> unset_env{"REDIS_URL", "NO_COLOR"};
  std::string cwd;                 // the child's working directory; empty: this process's
  std::chrono::seconds limit{60};  // killed after this: a hang is a failure
  // Called with the child's pid once it runs, before its output is read (to signal it).
  std::function<void(pid_t)> on_started;
  // When non-empty: SIGINT is sent once, as soon as stderr holds this text (an event the
  // child announces, so the test needs no guessed delay).
  std::string interrupt_on_stderr;
};

// Runs `argv` (argv[0] is a path). Never hangs: the child is killed after options.limit.
ProcessOutcome run_process(const std::vector<std::string>& argv, const RunOptions& options = {});

// The rlcheck binary under test: $RLCHECK_TEST_BINARY when set (the ThreadSanitizer pass runs
// these tests against its own build), else the one built beside the tests.
std::string rlcheck_binary();

// Options whose PATH finds the rlcheck under test first, as an installed rlcheck is found.
RunOptions with_rlcheck_on_path(RunOptions options = {});

// The rlcheck binary under test, followed by `args`.
ProcessOutcome run_rlcheck(const std::vector<std::string>& args, const RunOptions& options = {});

// Lines of `text`, without the newlines.
std::vector<std::string> lines_of(const std::string& text);

// Appends the whitespace-separated words of `flags` ("--limit 10 --window 1s") to `args`.
void append_words(std::vector<std::string>& args, const std::string& flags);

}  // namespace rlcheck::testing
