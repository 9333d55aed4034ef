#include "redis/async_client.hpp"

#include "redis/loop_adapter.hpp"

#include <fmt/format.h>

#include "redis/reply.hpp"

namespace rlcheck::redis {

using engine::Decision;
using engine::ErrorKind;

AsyncClient::AsyncClient(event_base* base, engine::ClientListener& listener, int slot,
                         RunTarget& target, int client_id)
    : base_(base),
      listener_(listener),
      slot_(slot),
      target_(target),
      rng_(engine::client_seed(target.seed, client_id)) {}

AsyncClient::~AsyncClient() {
  closing_ = true;
  if (context_ != nullptr)
    redisAsyncFree(context_);
}

void AsyncClient::connect() {
  const Endpoint& endpoint = target_.endpoint;
  context_ = endpoint.is_unix() ? redisAsyncConnectUnix(endpoint.socket_path.c_str())
                                : redisAsyncConnect(endpoint.host.c_str(), endpoint.port);
  if (context_ == nullptr || context_->err) {
    std::string message = fmt::format("cannot connect to {}: {}", endpoint.display(),
                                      context_ ? context_->errstr : "out of memory");
    if (context_ != nullptr)
      redisAsyncFree(context_);
    context_ = nullptr;
    dead_ = true;
    listener_.on_connected(slot_, false, message);
    return;
  }
  context_->data = this;
  attach_to_loop(context_, base_);
  redisAsyncSetConnectCallback(context_, &AsyncClient::on_connect);
  redisAsyncSetDisconnectCallback(context_, &AsyncClient::on_disconnect);
  // Login commands and a PING go out at once; the connection is ready when PING answers.
  auto commands = target_.login;
  commands.push_back({"PING"});
  login_replies_left_ = commands.size();
  for (const auto& command : commands) {
    command_.begin(command.size());
    for (const std::string& arg : command)
      command_.add(arg);
    send_formatted(k_login_generation);
  }
}

void AsyncClient::start(uint64_t seq) {
  start_with(*target_.strategy, seq);
}

void AsyncClient::start_with(const Strategy& strategy, uint64_t seq) {
  strategy_ = &strategy;
  state_ = RequestState{};
  state_.seq = seq;
  state_.rng = &rng_;
  pending_eval_.script = nullptr;
  in_flight_ = true;
  if (!alive()) {
    fail_connection(ErrorKind::connection, "the connection is closed");
    return;
  }
  strategy_->begin(state_, *this);
}

void AsyncClient::abort(ErrorKind why) {
  dead_ = true;
  if (in_flight_) {
    Decision decision;
    decision.error = why;
    decision.error_message =
        why == ErrorKind::timeout ? "no final reply within --timeout" : "request abandoned";
    finish(std::move(decision));
  }
  if (context_ != nullptr) {
    redisAsyncContext* context = context_;
    context_ = nullptr;
    closing_ = true;
    redisAsyncFree(context);
  }
}

void AsyncClient::send(const std::vector<std::string_view>& argv) {
  command_.begin(argv.size());
  for (std::string_view arg : argv)
    command_.add(arg);
  send_formatted(generation_);
}

std::vector<std::string>& AsyncClient::eval_keys() {
  return pending_eval_.keys;
}

std::vector<std::string>& AsyncClient::eval_args() {
  return pending_eval_.args;
}

void AsyncClient::eval(const LoadedScript& script) {
  pending_eval_.script = &script;
  pending_eval_.reloaded = false;
  send_eval(false);
}

void AsyncClient::send_eval(bool with_source) {
  const LoadedScript& script = *pending_eval_.script;
  command_.begin(3 + pending_eval_.keys.size() + pending_eval_.args.size());
  command_.add(with_source ? "EVAL" : "EVALSHA");
  command_.add(with_source ? script.source : script.sha);
  command_.add(std::to_string(pending_eval_.keys.size()));
  for (const std::string& key : pending_eval_.keys)
    command_.add(key);
  for (const std::string& arg : pending_eval_.args)
    command_.add(arg);
  send_formatted(generation_);
}

void AsyncClient::send_formatted(uintptr_t generation) {
  if (context_ == nullptr || dead_)
    return;
  const std::string_view text = command_.text();
  const int status =
      redisAsyncFormattedCommand(context_, &AsyncClient::on_reply,
                                 reinterpret_cast<void*>(generation), text.data(), text.size());
  if (status != REDIS_OK) {
    fail_connection(ErrorKind::connection,
                    fmt::format("cannot send to {}", target_.endpoint.display()));
  }
}

void AsyncClient::handle_login_reply(redisReply* reply) {
  if (login_replies_left_ == 0)
    return;  // already reported
  if (reply == nullptr || is_error(reply)) {
    login_replies_left_ = 0;
    dead_ = true;
    listener_.on_connected(
        slot_, false,
        reply == nullptr
            ? fmt::format("connection to {} closed while logging in", target_.endpoint.display())
            : fmt::format("{} refused the login: {}", target_.endpoint.display(),
                          describe_reply(reply)));
    return;
  }
  if (--login_replies_left_ == 0) {
    listener_.on_connected(slot_, true, {});
  }
}

void AsyncClient::handle_reply(uintptr_t generation, redisReply* reply) {
  if (closing_)
    return;
  if (generation == k_login_generation) {
    handle_login_reply(reply);
    return;
  }
  if (!in_flight_ || generation != generation_)
    return;  // settled already
  if (reply == nullptr) {
    fail_connection(ErrorKind::connection_lost,
                    fmt::format("connection to {} closed", target_.endpoint.display()));
    return;
  }
  if (pending_eval_.script != nullptr && !pending_eval_.reloaded && is_noscript(reply)) {
    // The script cache was flushed (restart, failover, SCRIPT FLUSH): EVAL loads it again.
    pending_eval_.reloaded = true;
    target_.stats.script_reloads.fetch_add(1, std::memory_order_relaxed);
    send_eval(true);
    return;
  }
  if (is_error(reply)) {
    Decision decision;
    decision.error = ErrorKind::server_error;
    const LoadedScript* script = strategy_->script();
    decision.error_message =
        script ? fmt::format("script {} replied {}", script->name, describe_reply(reply))
               : fmt::format("the server replied {}", describe_reply(reply));
    finish(std::move(decision));
    return;
  }
  if (auto decision = strategy_->on_reply(state_, *reply, *this)) {
    finish(std::move(*decision));
  }
}

void AsyncClient::finish(Decision decision) {
  in_flight_ = false;
  ++generation_;
  listener_.on_decision(slot_, std::move(decision));
}

void AsyncClient::fail_connection(ErrorKind kind, std::string message) {
  dead_ = true;
  if (!in_flight_)
    return;
  Decision decision;
  decision.error = kind;
  decision.error_message = std::move(message);
  finish(std::move(decision));
}

void AsyncClient::on_reply(redisAsyncContext* context, void* reply, void* privdata) {
  auto* self = static_cast<AsyncClient*>(context->data);
  if (self == nullptr)
    return;
  self->handle_reply(reinterpret_cast<uintptr_t>(privdata), static_cast<redisReply*>(reply));
}

void AsyncClient::on_connect(const redisAsyncContext* context, int status) {
  auto* self = static_cast<AsyncClient*>(context->data);
  if (self == nullptr || status == REDIS_OK || self->closing_)
    return;
  // hiredis frees a context whose connect failed, right after this callback.
  self->context_ = nullptr;
  self->dead_ = true;
  if (self->login_replies_left_ == 0)
    return;
  self->login_replies_left_ = 0;
  self->listener_.on_connected(
      self->slot_, false,
      fmt::format("cannot connect to {}: {}", self->target_.endpoint.display(), context->errstr));
}

void AsyncClient::on_disconnect(const redisAsyncContext* context, int) {
  auto* self = static_cast<AsyncClient*>(context->data);
  if (self == nullptr)
    return;
  // hiredis frees the context after this callback returns.
  self->context_ = nullptr;
  self->dead_ = true;
}

}  // namespace rlcheck::redis
