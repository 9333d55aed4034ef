#pragma once
// A blocking Redis connection for set-up and tear-down (SCRIPT LOAD, PTTL, DEL), never for
// the load itself. It drives the same Connection as the load (plain or TLS, on a private
// event loop), so whatever the load can reach, set-up can too.

#include <expected>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.hpp"
#include "redis/endpoint.hpp"
#include "redis/reply.hpp"

namespace rlcheck::redis {

class SyncClient {
 public:
  // Connects (TLS for rediss://), authenticates, selects the database and PINGs. On error:
  // what was tried and what went wrong, e.g. "cannot connect to redis://127.0.0.1:1:
  // Connection refused". `timeout` bounds the connect and every call.
  static std::expected<SyncClient, std::string> connect(const Endpoint& endpoint,
                                                        config::Nanos timeout);
  SyncClient(SyncClient&&) noexcept;
  SyncClient& operator=(SyncClient&&) noexcept;
  ~SyncClient();

  // Sends one command. An I/O failure is an error; an error *reply* is a reply (see is_error).
  std::expected<ReplyPtr, std::string> call(const std::vector<std::string_view>& argv);
  std::expected<ReplyPtr, std::string> call(std::initializer_list<std::string_view> argv) {
    return call(std::vector<std::string_view>(argv));
  }
  // The next reply the server pushes without a command (after MONITOR or SUBSCRIBE).
  std::expected<ReplyPtr, std::string> read_reply();

  const Endpoint& endpoint() const;

 private:
  class Session;
  explicit SyncClient(std::unique_ptr<Session> session);
  std::unique_ptr<Session> session_;
};

}  // namespace rlcheck::redis
