#pragma once
// A redis-server of one test's own, on a free loopback port, that the test may kill mid-run
// (the shared TestRedis must outlive every test). Stopped on destruction if still running.

#include <expected>
#include <optional>
#include <string>

#include "process/child_process.hpp"
#include "redis/sync_client.hpp"

namespace rlcheck::testing {

class PrivateRedis {
 public:
  // Starts redis-server and waits (bounded) until it answers PING; throws std::runtime_error
  // when it does not.
  PrivateRedis();
  PrivateRedis(const PrivateRedis&) = delete;
  PrivateRedis& operator=(const PrivateRedis&) = delete;

  std::string tcp_url() const;  // redis://127.0.0.1:PORT
  // A fresh blocking connection, or the reason there is none (the server was killed).
  std::expected<redis::SyncClient, std::string> connect() const;
  // SIGKILL, as a crash or an OOM kill would: no shutdown, connections reset. Reaps it.
  void kill();

 private:
  int port_ = 0;
  std::optional<process::ChildProcess> server_;
};

}  // namespace rlcheck::testing
