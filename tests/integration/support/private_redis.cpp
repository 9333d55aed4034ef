#include "support/private_redis.hpp"

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/real_server.hpp"

namespace rlcheck::testing {
namespace {

constexpr auto k_ready_within = std::chrono::seconds(10);

}  // namespace

PrivateRedis::PrivateRedis() : port_(free_loopback_port()) {
  start();
}

std::string PrivateRedis::tcp_url() const {
  return "redis://127.0.0.1:" + std::to_string(port_);
}

std::expected<redis::SyncClient, std::string> PrivateRedis::connect() const {
  auto endpoint = redis::parse_endpoint(tcp_url());
  return redis::SyncClient::connect(*endpoint, std::chrono::seconds(2));
}

void PrivateRedis::kill() {
  if (!server_)
    return;
  ::kill(server_->pid(), SIGKILL);
  server_->stop();  // reaps the killed process
  server_.reset();
}

void PrivateRedis::start() {
  auto path = process::find_on_path("redis-server");
  if (!path)
    throw std::runtime_error("redis-server is not on PATH");
  // No persistence: nothing is loaded at start, nothing written at any time.
  auto server = process::ChildProcess::spawn(
      {*path, "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "", "--appendonly",
       "no", "--dir", "/tmp", "--dbfilename", "rlcheck-test-never-written.rdb", "--logfile", ""});
  if (!server)
    throw std::runtime_error("cannot start redis-server: " + server.error());
  server_.emplace(std::move(*server));

  const auto deadline = std::chrono::steady_clock::now() + k_ready_within;
  std::string last_error;
  while (std::chrono::steady_clock::now() < deadline) {
    auto client = connect();
    if (client)
      return;
    last_error = client.error();
    if (!server_->running())
      throw std::runtime_error("redis-server exited: " + last_error);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("redis-server did not answer within 10s: " + last_error);
}

}  // namespace rlcheck::testing
