#pragma once
// A private redis-server on a unix socket in a temporary directory, for when the user named
// no Redis and nothing listens on 127.0.0.1:6379. It persists nothing and is stopped, and its
// directory removed, when this object goes.

#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "process/child_process.hpp"
#include "redis/endpoint.hpp"

namespace rlcheck::provision {

class EmbeddedServer {
 public:
  // Starts `server_path` and waits (at most a few seconds) until it answers PING.
  static std::expected<std::unique_ptr<EmbeddedServer>, std::string> start(
      const std::string& server_path);
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  redis::Endpoint endpoint() const;

  // Kills the server (SIGKILL: no shutdown, nothing saved) and starts it again on the same
  // socket, empty, waiting as start() does. Clients see their connections drop and must
  // connect again. On error, why it did not come back; the server is then down.
  std::expected<void, std::string> restart();

 private:
  EmbeddedServer(std::string server_path, std::filesystem::path directory)
      : server_path_(std::move(server_path)), directory_(std::move(directory)) {}
  // Spawns the server into child_ and waits until it answers PING.
  std::expected<void, std::string> launch();

  std::string server_path_;
  std::filesystem::path directory_;  // created by start(), removed by the destructor
  std::optional<process::ChildProcess> child_;
};

// The last non-empty line of a redis-server log file ("no log" when there is none): what
// it said before it exited.
std::string last_log_line(const std::filesystem::path& log);

}  // namespace rlcheck::provision
