#pragma once
// The exit codes of the contract, and the one fatal error type that carries them to main.

#include <stdexcept>
#include <string>

namespace rlcheck::base {

enum class ExitCode : int {
  ok = 0,             // every check passed
  check_failed = 1,   // a check failed: the CI gate
  hook_blocked = 2,   // --hook, and a check failed or the test could not run
  cannot_test = 3,    // target unreachable, errors above --max-errors
  usage = 64,         // bad flags or values
  interrupted = 130,  // Ctrl-C; partial results were still reported
};

// Thrown where work cannot go on; caught once in run_main, which prints the message on one
// line and exits with `code`.
class FatalError : public std::runtime_error {
 public:
  FatalError(ExitCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

inline FatalError usage_error(const std::string& message) {
  return FatalError(ExitCode::usage, message);
}
inline FatalError cannot_test(const std::string& message) {
  return FatalError(ExitCode::cannot_test, message);
}

}  // namespace rlcheck::base
