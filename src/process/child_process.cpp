#include "process/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace rlcheck::process {

std::optional<std::string> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty())
      continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

std::expected<ChildProcess, std::string> ChildProcess::spawn(const std::vector<std::string>& argv,
                                                             Stderr stderr_mode) {
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  int err_pipe[2] = {-1, -1};
  if (stderr_mode == Stderr::discard) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  } else if (stderr_mode == Stderr::pipe) {
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      return std::unexpected(fmt::format("cannot start {}: no pipe", argv[0]));
    }
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);

  pid_t pid = -1;
  const int status = posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (err_pipe[1] >= 0)
    close(err_pipe[1]);
  if (status != 0) {
    if (err_pipe[0] >= 0)
      close(err_pipe[0]);
    return std::unexpected(fmt::format("cannot start {}: {}", argv[0], std::strerror(status)));
  }
  return ChildProcess(pid, err_pipe[0]);
}

ChildProcess::~ChildProcess() {
  stop();
  if (stderr_fd_ >= 0)
    close(stderr_fd_);
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    stop();
    if (stderr_fd_ >= 0)
      close(stderr_fd_);
    pid_ = other.pid_;
    stderr_fd_ = other.stderr_fd_;
    other.pid_ = -1;
    other.stderr_fd_ = -1;
  }
  return *this;
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pid_ > 0) {
    int status = 0;
    const pid_t reaped = waitpid(pid_, &status, WNOHANG);
    if (reaped == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

bool ChildProcess::running() {
  if (pid_ <= 0)
    return false;
  int status = 0;
  const pid_t reaped = waitpid(pid_, &status, WNOHANG);
  if (reaped == pid_ || (reaped < 0 && errno == ECHILD)) {
    pid_ = -1;
    return false;
  }
  return true;
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (!running())
    return;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running())
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace rlcheck::process
