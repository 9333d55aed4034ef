#pragma once
// A real redis-server for the integration tests, on a free loopback port and a unix socket in
// a temporary directory; started on first use, stopped when the test binary exits.

#include <string>
#include <vector>

#include <sys/types.h>

#include "redis/sync_client.hpp"

namespace rlcheck::testing {

class TestRedis {
 public:
  static TestRedis& shared();
  ~TestRedis();

  std::string tcp_url() const;   // redis://127.0.0.1:PORT
  std::string unix_url() const;  // unix:///tmp/.../redis.sock
  int port() const { return port_; }

  // A fresh blocking connection; fails the test binary if the server is gone.
  redis::SyncClient connect() const;
  // Keys matching `pattern` (SCAN, so never blocks the server).
  std::vector<std::string> keys(const std::string& pattern) const;

 private:
  TestRedis();
  std::string directory_;
  int port_ = 0;
  pid_t pid_ = -1;
  int log_fd_ = -1;  // kept open: redis-server logs to this pipe
};

}  // namespace rlcheck::testing
