#pragma once
// Child processes, owned: the destructor stops the child (SIGTERM, then SIGKILL) and reaps it.

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace rlcheck::process {

// The full path of `name` on $PATH, if it is there and executable.
std::optional<std::string> find_on_path(const std::string& name);

class ChildProcess {
 public:
  enum class Stderr {
    discard,  // to /dev/null
    inherit,  // rlcheck's own stderr
    pipe,     // a pipe whose read end is stderr_fd()
  };
  // Starts argv[0] (a path) in its own process group, so the terminal's Ctrl-C reaches only
  // rlcheck, which then stops the child itself. Stdin and stdout go to /dev/null.
  static std::expected<ChildProcess, std::string> spawn(const std::vector<std::string>& argv,
                                                        Stderr stderr_mode = Stderr::discard);
  // Waits up to `limit` for the child to exit: its exit status, or nullopt if still running.
  std::optional<int> wait_for(std::chrono::milliseconds limit);

  ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_), stderr_fd_(other.stderr_fd_) {
    other.pid_ = -1;
    other.stderr_fd_ = -1;
  }
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  // With Stderr::pipe, the read end of the child's stderr (owned here); else -1.
  int stderr_fd() const { return stderr_fd_; }

  // True while the child has not exited (reaps it if it has).
  bool running();
  // SIGTERM, up to `grace` for it to exit, then SIGKILL; always reaps.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));
  pid_t pid() const { return pid_; }

 private:
  ChildProcess(pid_t pid, int stderr_fd) : pid_(pid), stderr_fd_(stderr_fd) {}
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
};

}  // namespace rlcheck::process
