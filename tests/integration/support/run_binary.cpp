#include "support/run_binary.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace rlcheck::testing {
namespace {

std::vector<std::string> child_environment(const RunOptions& options) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string item(*entry);
    const std::string name = item.substr(0, item.find('='));
    bool drop = options.env.contains(name);
    for (const std::string& unset : options.unset_env)
      drop = drop || unset == name;
    if (!drop)
      env.push_back(item);
  }
  for (const auto& [name, value] : options.env)
    env.push_back(name + "=" + value);
  return env;
}

}  // namespace

ProcessOutcome run_process(const std::vector<std::string>& argv, const RunOptions& options) {
  // Close-on-exec: a child another thread forks at the same moment must not inherit these
  // pipes, or this one's end of file would wait for that child to exit (dup2 clears the flag
  // on the child's own standard streams).
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
      pipe2(in_pipe, O_CLOEXEC) != 0)
    return {};
  // Everything the child needs is built before fork: between fork and exec a child of a
  // threaded process may only make async-signal-safe calls. An allocation there can wait
  // forever on a lock another thread held when it forked (the child never runs rlcheck).
  std::vector<std::string> env = child_environment(options);
  std::vector<char*> args;
  for (const auto& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& item : env)
    envp.push_back(item.data());
  envp.push_back(nullptr);

  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    if (options.stdin_mode == StdinMode::closed) {
      close(STDIN_FILENO);
    } else {
      dup2(in_pipe[0], STDIN_FILENO);
    }
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0)
      _exit(127);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(in_pipe[0]);
  if (options.stdin_mode == StdinMode::text) {
    // Hook input is small: it fits the pipe buffer, so this cannot block.
    [[maybe_unused]] auto written =
        write(in_pipe[1], options.stdin_text.data(), options.stdin_text.size());
  }
  close(in_pipe[1]);
  if (options.on_started)
    options.on_started(pid);

  ProcessOutcome outcome;
  const auto deadline = std::chrono::steady_clock::now() + options.limit;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_streams = 2;
  char buffer[8192];
  while (open_streams > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      outcome.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(left)) <= 0)
      continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0)
        continue;
      const ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_streams;
        continue;
      }
      (i == 0 ? outcome.out : outcome.err).append(buffer, static_cast<size_t>(got));
      if (i == 1 && !outcome.interrupted && !options.interrupt_on_stderr.empty() &&
          outcome.err.find(options.interrupt_on_stderr) != std::string::npos) {
        outcome.interrupted = kill(pid, SIGINT) == 0;
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0)
      close(fd.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

std::string rlcheck_binary() {
  const char* chosen = std::getenv("RLCHECK_TEST_BINARY");
  return chosen != nullptr && *chosen != '\0' ? chosen : RLCHECK_BINARY;
}

RunOptions with_rlcheck_on_path(RunOptions options) {
  const std::string binary = rlcheck_binary();
  const char* path = std::getenv("PATH");
  options.env["PATH"] = binary.substr(0, binary.rfind('/')) + ":" + (path ? path : "/usr/bin:/bin");
  return options;
}

ProcessOutcome run_rlcheck(const std::vector<std::string>& args, const RunOptions& options) {
  std::vector<std::string> argv{rlcheck_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, options);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  std::string line;
  while (std::getline(stream, line))
    lines.push_back(line);
  return lines;
}

void append_words(std::vector<std::string>& args, const std::string& flags) {
  std::istringstream words(flags);
  for (std::string word; words >> word;)
    args.push_back(word);
}

}  // namespace rlcheck::testing
