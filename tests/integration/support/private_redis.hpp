#pragma once
// A redis-server of one test's own on a loopback port that stays the same across restarts, so
// a test can kill it mid-run and start it again where rlcheck will reconnect (the shared
// TestRedis must outlive every test). No persistence: a restarted server starts empty, as a
// cache-only Redis does after a crash. Stopped on destruction if still running.

#include <expected>
#include <optional>
#include <string>

#include "process/child_process.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::testing {

class PrivateRedis {
 public:
  // Picks a free port (binding port 0) and starts the server on it; throws std::runtime_error
  // when it does not answer PING within a bound.
  PrivateRedis();
  PrivateRedis(const PrivateRedis&) = delete;
  PrivateRedis& operator=(const PrivateRedis&) = delete;

  std::string tcp_url() const;  // redis://127.0.0.1:PORT
  int port() const { return port_; }
  // A fresh blocking connection, or the reason there is none (the server is down).
  std::expected<redis::SyncClient, std::string> connect() const;

  // SIGKILL, as a crash or an OOM kill would: no shutdown, connections reset. Reaps it.
  void kill();
  // Starts the server again on the same port, empty, and waits until it answers (throws as the
  // constructor does).
  void start();

 private:
  int port_ = 0;
  std::optional<process::ChildProcess> server_;
};

}  // namespace rlcheck::testing
