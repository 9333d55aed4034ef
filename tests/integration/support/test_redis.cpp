#include "support/test_redis.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process/child_process.hpp"

namespace rlcheck::testing {
namespace {

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace

TestRedis& TestRedis::shared() {
  static TestRedis server;
  return server;
}

TestRedis::TestRedis() {
  auto server = process::find_on_path("redis-server");
  if (!server)
    throw std::runtime_error("redis-server is not on PATH");
  std::string pattern = "/tmp/rlcheck-test-redis-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed");
  directory_ = pattern;
  port_ = free_loopback_port();

  int log_pipe[2];
  if (pipe(log_pipe) != 0)
    throw std::runtime_error("pipe failed");
  const std::string port = std::to_string(port_);
  const std::string socket_path = directory_ + "/redis.sock";
  pid_ = fork();
  if (pid_ == 0) {
    dup2(log_pipe[1], STDOUT_FILENO);
    // Not the test binary's stderr either: a server left behind by a crashed test would hold
    // ctest's pipe open, and ctest would wait for it until the shard's timeout.
    dup2(log_pipe[1], STDERR_FILENO);
    close(log_pipe[0]);
    close(log_pipe[1]);
    setpgid(0, 0);
    execl(server->c_str(), server->c_str(), "--port", port.c_str(), "--bind", "127.0.0.1",
          "--unixsocket", socket_path.c_str(), "--unixsocketperm", "700", "--dir",
          directory_.c_str(), "--save", "", "--appendonly", "no", "--logfile", "",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(log_pipe[1]);
  log_fd_ = log_pipe[0];

  // Ready when the server says so on its log, not after a guessed delay.
  std::string log;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buffer[4096];
  while (log.find("Ready to accept connections") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd fd{log_fd_, POLLIN, 0};
    if (left <= 0 || poll(&fd, 1, static_cast<int>(left)) <= 0) {
      throw std::runtime_error("redis-server did not start: " + log);
    }
    const ssize_t got = read(log_fd_, buffer, sizeof buffer);
    if (got <= 0)
      throw std::runtime_error("redis-server exited: " + log);
    log.append(buffer, static_cast<size_t>(got));
  }
}

TestRedis::~TestRedis() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (log_fd_ >= 0)
    close(log_fd_);
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::string TestRedis::tcp_url() const {
  return "redis://127.0.0.1:" + std::to_string(port_);
}
std::string TestRedis::unix_url() const {
  return "unix://" + directory_ + "/redis.sock";
}

redis::SyncClient TestRedis::connect() const {
  auto endpoint = redis::parse_endpoint(tcp_url());
  auto client = redis::SyncClient::connect(*endpoint, std::chrono::seconds(5));
  if (!client)
    throw std::runtime_error(client.error());
  return std::move(*client);
}

std::vector<std::string> TestRedis::keys(const std::string& pattern) const {
  redis::SyncClient client = connect();
  std::vector<std::string> found;
  std::string cursor = "0";
  do {
    auto reply = client.call({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (!reply || (*reply)->type != REDIS_REPLY_ARRAY)
      throw std::runtime_error("SCAN failed");
    cursor.assign((*reply)->element[0]->str, (*reply)->element[0]->len);
    const redisReply* batch = (*reply)->element[1];
    for (size_t i = 0; i < batch->elements; ++i) {
      found.emplace_back(batch->element[i]->str, batch->element[i]->len);
    }
  } while (cursor != "0");
  return found;
}

}  // namespace rlcheck::testing
