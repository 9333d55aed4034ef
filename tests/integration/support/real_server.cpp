#include "support/real_server.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process/child_process.hpp"

namespace rlcheck::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Reaps `pid` if it has exited; true when it has.
bool exited(pid_t pid, int& status) {
  return waitpid(pid, &status, WNOHANG) == pid;
}

}  // namespace

ScratchDir::ScratchDir(const std::string& name) {
  std::string pattern = "/tmp/rlcheck-" + name + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::write(const std::string& name, const std::string& text) const {
  const std::filesystem::path file = std::filesystem::path(path_) / name;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file);
  out << text;
  if (!out)
    throw std::runtime_error("cannot write " + file.string());
  return file.string();
}

bool accepts_connections(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return connected;
}

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw std::runtime_error("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!bound)
    throw std::runtime_error("cannot find a free loopback port");
  return ntohs(address.sin_port);
}

std::optional<std::string> find_program(const std::string& name,
                                        const std::vector<std::string>& candidates) {
  for (const std::string& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return process::find_on_path(name);
}

RealServer::RealServer(const std::vector<std::string>& argv, const std::string& cwd,
                       const std::string& log_file, int port, std::chrono::milliseconds limit)
    : port_(port), log_file_(log_file) {
  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (auto& arg : args)
    raw.push_back(arg.data());
  raw.push_back(nullptr);

  pid_ = fork();
  if (pid_ < 0)
    throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    setpgid(0, 0);  // the server and its workers: one group, stopped together
    const int null_fd = open("/dev/null", O_RDONLY);
    const int log_fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (null_fd < 0 || log_fd < 0 || chdir(cwd.c_str()) != 0)
      _exit(126);
    dup2(null_fd, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execv(raw[0], raw.data());
    _exit(127);
  }
  setpgid(pid_, pid_);  // also from here, so stop() can signal the group at once

  // Ready when it accepts a connection; polled, as the other servers of these tests are.
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    int status = 0;
    if (exited(pid_, status)) {
      pid_ = -1;
      throw std::runtime_error(argv[0] + " exited before it listened (status " +
                               std::to_string(status) + "): " + log());
    }
    if (accepts_connections(port_))
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string printed = log();
  stop();
  throw std::runtime_error(argv[0] + " did not listen on 127.0.0.1:" + std::to_string(port_) +
                           " within " + std::to_string(limit.count()) + "ms: " + printed);
}

RealServer::~RealServer() {
  stop();
}

std::string RealServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

std::string RealServer::log() const {
  std::ifstream in(log_file_);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void RealServer::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0)
    return;
  kill(-pid_, SIGTERM);
  const auto deadline = Clock::now() + grace;
  int status = 0;
  bool gone = exited(pid_, status);
  while (!gone && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    gone = exited(pid_, status);
  }
  if (!gone) {
    kill(-pid_, SIGKILL);  // the server and whatever of its group is left
    waitpid(pid_, &status, 0);
  }
  pid_ = -1;
}

}  // namespace rlcheck::testing
