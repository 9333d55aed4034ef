#pragma once
// A blocking Redis connection for set-up and tear-down (SCRIPT LOAD, PTTL, DEL), never for
// the load itself.

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
  // Connects, authenticates, selects the database and PINGs. On error: what was tried and
  // what went wrong, e.g. "cannot connect to redis://127.0.0.1:1: Connection refused".
  static std::expected<SyncClient, std::string> connect(const Endpoint& endpoint,
                                                        config::Nanos timeout);

  // Sends one command. An I/O failure is an error; an error *reply* is a reply (see is_error).
  std::expected<ReplyPtr, std::string> call(const std::vector<std::string_view>& argv);
  std::expected<ReplyPtr, std::string> call(std::initializer_list<std::string_view> argv) {
    return call(std::vector<std::string_view>(argv));
  }
  // The next reply the server pushes without a command (after MONITOR or SUBSCRIBE).
  std::expected<ReplyPtr, std::string> read_reply();

 private:
  struct ContextFree {
    void operator()(redisContext* context) const { redisFree(context); }
  };
  SyncClient(std::unique_ptr<redisContext, ContextFree> context, std::string display)
      : context_(std::move(context)), display_(std::move(display)) {}

  std::unique_ptr<redisContext, ContextFree> context_;
  std::string display_;
};

// The commands that make a fresh connection ready: AUTH and SELECT where the endpoint asks.
std::vector<std::vector<std::string>> login_commands(const Endpoint& endpoint);

}  // namespace rlcheck::redis
