#include "provision/embedded_server.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "redis/sync_client.hpp"

namespace rlcheck::provision {
namespace {

constexpr auto k_start_limit = std::chrono::seconds(5);
constexpr auto k_poll = std::chrono::milliseconds(10);

}  // namespace

std::string last_log_line(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line;
  std::string last = "no log";
  while (std::getline(in, line)) {
    if (!line.empty())
      last = line;
  }
  return last;
}

std::expected<std::unique_ptr<EmbeddedServer>, std::string> EmbeddedServer::start(
    const std::string& server_path) {
  std::string pattern = (std::filesystem::temp_directory_path() / "rlcheck-redis-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return std::unexpected(fmt::format("cannot create a directory for redis-server in {}",
                                       std::filesystem::temp_directory_path().string()));
  }
  std::unique_ptr<EmbeddedServer> server(
      new EmbeddedServer(server_path, std::filesystem::path(pattern)));
  if (auto launched = server->launch(); !launched)
    return std::unexpected(launched.error());
  return server;
}

std::expected<void, std::string> EmbeddedServer::launch() {
  const std::string socket = (directory_ / "redis.sock").string();
  auto child = process::ChildProcess::spawn(
      {server_path_, "--port", "0", "--unixsocket", socket, "--unixsocketperm", "700", "--dir",
       directory_.string(), "--save", "", "--appendonly", "no", "--logfile",
       (directory_ / "redis.log").string()});
  if (!child)
    return std::unexpected(child.error());
  child_.emplace(std::move(*child));

  const redis::Endpoint endpoint = this->endpoint();
  const auto deadline = std::chrono::steady_clock::now() + k_start_limit;
  std::string last_error;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!child_->running()) {
      return std::unexpected(fmt::format("{} exited at start: {}", server_path_,
                                         last_log_line(directory_ / "redis.log")));
    }
    if (std::filesystem::exists(socket)) {
      auto client = redis::SyncClient::connect(endpoint, std::chrono::milliseconds(500));
      if (client)
        return {};
      last_error = client.error();
    }
    std::this_thread::sleep_for(k_poll);
  }
  return std::unexpected(fmt::format("{} did not answer within {}s{}", server_path_,
                                     k_start_limit.count(),
                                     last_error.empty() ? "" : ": " + last_error));
}

std::expected<void, std::string> EmbeddedServer::restart() {
  if (child_) {
    if (child_->running())
      kill(child_->pid(), SIGKILL);
    child_->stop();  // reaps
    child_.reset();
  }
  // The killed server leaves its socket file behind; the new one must not be taken for ready.
  std::error_code ignored;
  std::filesystem::remove(directory_ / "redis.sock", ignored);
  return launch();
}

EmbeddedServer::~EmbeddedServer() {
  if (child_)
    child_->stop();
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

redis::Endpoint EmbeddedServer::endpoint() const {
  redis::Endpoint endpoint;
  endpoint.socket_path = (directory_ / "redis.sock").string();
  return endpoint;
}

}  // namespace rlcheck::provision
