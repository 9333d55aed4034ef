#pragma once
// A private redis-server on a unix socket in a temporary directory, for when the user named
// no Redis and nothing listens on 127.0.0.1:6379. It persists nothing and is stopped, and its
// directory removed, when this object goes.

#include <expected>
#include <filesystem>
#include <memory>
#include <string>

#include "process/child_process.hpp"
#include "redis/endpoint.hpp"

namespace rlcheck::redis {

class EmbeddedServer {
 public:
  // Starts `server_path` and waits (at most a few seconds) until it answers PING.
  static std::expected<std::unique_ptr<EmbeddedServer>, std::string> start(
      const std::string& server_path);
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  Endpoint endpoint() const;

 private:
  EmbeddedServer(std::filesystem::path directory, process::ChildProcess child)
      : directory_(std::move(directory)), child_(std::move(child)) {}

  std::filesystem::path directory_;  // created by start(), removed by the destructor
  process::ChildProcess child_;
};

// The last non-empty line of a redis-server log file ("no log" when there is none): what
// it said before it exited.
std::string last_log_line(const std::filesystem::path& log);

}  // namespace rlcheck::redis
