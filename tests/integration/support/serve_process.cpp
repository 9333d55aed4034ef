#include "support/serve_process.hpp"

#include <algorithm>
#include <csignal>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/run_binary.hpp"

namespace rlcheck::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view k_listening = "listening on ";

int left_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, left));
}

}  // namespace

ServeProcess::ServeProcess(const std::vector<std::string>& args, std::chrono::milliseconds limit) {
  std::vector<std::string> argv{rlcheck_binary(), "serve"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (auto& arg : argv)
    raw.push_back(arg.data());
  raw.push_back(nullptr);

  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ < 0) {
    close(err_pipe[0]);
    close(err_pipe[1]);
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    const int null_fd = open("/dev/null", O_RDWR);
    dup2(null_fd, STDIN_FILENO);
    dup2(null_fd, STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    setpgid(0, 0);  // the terminal's Ctrl-C is the test binary's, not serve's
    execv(raw[0], raw.data());
    _exit(127);
  }
  close(err_pipe[1]);
  err_fd_ = err_pipe[0];
  fcntl(err_fd_, F_SETFL, fcntl(err_fd_, F_GETFL) | O_NONBLOCK);

  drain_stderr(std::string(k_listening), limit);
  for (const std::string& line : lines_) {
    const size_t at = line.find(k_listening);
    if (at == std::string::npos)
      continue;
    const size_t start = at + k_listening.size();
    url_ = line.substr(start, line.find(' ', start) - start);
    const size_t slash = url_.find('/', std::string_view("http://").size());
    const size_t colon = url_.rfind(':', slash);
    port_ = std::stoi(url_.substr(colon + 1, slash - colon - 1));
    return;
  }
  const std::string printed = log();
  stop();
  throw std::runtime_error("rlcheck serve did not start listening: " + printed);
}

ServeProcess::~ServeProcess() {
  stop();
}

bool ServeProcess::read_some(std::chrono::milliseconds wait) {
  if (eof_ || err_fd_ < 0)
    return false;
  pollfd fd{err_fd_, POLLIN, 0};
  if (poll(&fd, 1, static_cast<int>(wait.count())) <= 0)
    return false;
  char buffer[4096];
  const ssize_t got = read(err_fd_, buffer, sizeof buffer);
  if (got < 0)
    return errno == EAGAIN || errno == EINTR;
  if (got == 0) {
    eof_ = true;
    if (!partial_.empty())
      lines_.push_back(std::move(partial_));
    partial_.clear();
    return false;
  }
  partial_.append(buffer, static_cast<size_t>(got));
  size_t newline;
  while ((newline = partial_.find('\n')) != std::string::npos) {
    lines_.push_back(partial_.substr(0, newline));
    partial_.erase(0, newline + 1);
  }
  return true;
}

const std::vector<std::string>& ServeProcess::drain_stderr(const std::string& containing,
                                                           std::chrono::milliseconds wait) {
  // First whatever is already there.
  while (read_some(std::chrono::milliseconds(0))) {
  }
  if (!containing.empty())
    wait_for_count(containing, 1, wait);
  return lines_;
}

int ServeProcess::wait_for_count(const std::string& text, int count,
                                 std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  while (read_some(std::chrono::milliseconds(0))) {
  }
  while (count_lines(text) < count && !eof_) {
    const int left = left_ms(deadline);
    if (left == 0)
      break;
    read_some(std::chrono::milliseconds(left));
  }
  return count_lines(text);
}

int ServeProcess::count_lines(const std::string& text) const {
  return static_cast<int>(std::count_if(lines_.begin(), lines_.end(), [&](const std::string& line) {
    return line.find(text) != std::string::npos;
  }));
}

std::string ServeProcess::log() const {
  std::string text;
  for (const std::string& line : lines_)
    text += line + "\n";
  return text + partial_;
}

std::optional<int> ServeProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0)
    return std::nullopt;
  kill(pid_, SIGTERM);
  // It has exited when its stderr closes (it starts no children that could keep it open).
  const auto deadline = Clock::now() + grace;
  while (!eof_ && left_ms(deadline) > 0)
    read_some(std::chrono::milliseconds(left_ms(deadline)));
  if (!eof_)
    kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  if (err_fd_ >= 0)
    close(err_fd_);
  err_fd_ = -1;
  eof_ = true;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace rlcheck::testing
