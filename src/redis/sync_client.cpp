#include "redis/sync_client.hpp"

#include <fmt/format.h>

#include "engine/event_time.hpp"

namespace rlcheck::redis {

std::vector<std::vector<std::string>> login_commands(const Endpoint& endpoint) {
  std::vector<std::vector<std::string>> commands;
  if (!endpoint.password.empty()) {
    if (endpoint.user.empty()) {
      commands.push_back({"AUTH", endpoint.password});
    } else {
      commands.push_back({"AUTH", endpoint.user, endpoint.password});
    }
  }
  if (endpoint.db != 0)
    commands.push_back({"SELECT", std::to_string(endpoint.db)});
  return commands;
}

std::expected<SyncClient, std::string> SyncClient::connect(const Endpoint& endpoint,
                                                           config::Nanos timeout) {
  const timeval tv = engine::to_timeval(timeout);
  redisContext* raw = endpoint.is_unix()
                          ? redisConnectUnixWithTimeout(endpoint.socket_path.c_str(), tv)
                          : redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, tv);
  std::unique_ptr<redisContext, ContextFree> context(raw);
  if (!context)
    return std::unexpected(fmt::format("cannot connect to {}: out of memory", endpoint.display()));
  if (context->err) {
    return std::unexpected(
        fmt::format("cannot connect to {}: {}", endpoint.display(), context->errstr));
  }
  redisSetTimeout(context.get(), tv);
  SyncClient client(std::move(context), endpoint.display());
  auto commands = login_commands(endpoint);
  commands.push_back({"PING"});
  for (const auto& command : commands) {
    std::vector<std::string_view> argv(command.begin(), command.end());
    auto reply = client.call(argv);
    if (!reply)
      return std::unexpected(reply.error());
    if (is_error(reply->get())) {
      return std::unexpected(fmt::format("{} refused {}: {}", endpoint.display(), command.front(),
                                         describe_reply(reply->get())));
    }
  }
  return client;
}

std::expected<ReplyPtr, std::string> SyncClient::call(const std::vector<std::string_view>& argv) {
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  pointers.reserve(argv.size());
  lengths.reserve(argv.size());
  for (std::string_view arg : argv) {
    pointers.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  void* raw = redisCommandArgv(context_.get(), static_cast<int>(argv.size()), pointers.data(),
                               lengths.data());
  if (raw == nullptr) {
    return std::unexpected(
        fmt::format("{}: {}", display_, context_->errstr[0] ? context_->errstr : "no reply"));
  }
  return ReplyPtr(static_cast<redisReply*>(raw));
}

std::expected<ReplyPtr, std::string> SyncClient::read_reply() {
  void* raw = nullptr;
  if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) {
    return std::unexpected(
        fmt::format("{}: {}", display_, context_->errstr[0] ? context_->errstr : "no reply"));
  }
  return ReplyPtr(static_cast<redisReply*>(raw));
}

}  // namespace rlcheck::redis
