#include "redis/async_client.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "redis/reply.hpp"

namespace rlcheck::redis {

using engine::Decision;
using engine::ErrorKind;

AsyncClient::AsyncClient(NodePool& pool, engine::ClientListener& listener, int slot,
                         RunTarget& target, int client_id)
    : listener_(listener),
      slot_(slot),
      target_(target),
      connection_(&pool.connection(slot / std::max(1, target.pipeline))),
      rng_(engine::client_seed(target.seed, client_id)) {}

AsyncClient::AsyncClient(event_base* base, engine::ClientListener& listener, int slot,
                         RunTarget& target, int client_id)
    : own_pool_(std::make_unique<NodePool>(base, target, false)),
      listener_(listener),
      slot_(slot),
      target_(target),
      connection_(&own_pool_->connection(0)),
      rng_(engine::client_seed(target.seed, client_id)) {}

AsyncClient::~AsyncClient() {
  connection_->forget(this);
}

void AsyncClient::connect() {
  connecting_ = true;
  connection_->when_ready(this);
}

void AsyncClient::on_ready() {
  if (connecting_) {
    connecting_ = false;
    listener_.on_connected(slot_, true, {});
    return;
  }
  if (waiting_) {
    waiting_ = false;
    dispatch_step();
  }
}

void AsyncClient::on_unreachable(const std::string& why) {
  const Endpoint& where = connection_->endpoint();
  std::string message = why.starts_with("refused ")
                            ? fmt::format("{} {}", where.display(), why)
                            : fmt::format("cannot connect to {}: {}", where.display(), why);
  if (connecting_) {
    connecting_ = false;
    listener_.on_connected(slot_, false, message);
    return;
  }
  if (waiting_) {
    waiting_ = false;
    fail(ErrorKind::connection, std::move(message));
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
  step_.clear();
  step_commands_ = 0;
  replies_left_ = 0;
  if (connection_->unreachable()) {
    fail(ErrorKind::connection, fmt::format("cannot connect to {}: {}",
                                            connection_->endpoint().display(),
                                            connection_->last_error()));
    return;
  }
  strategy_->begin(state_, *this);
  dispatch_step();
}

void AsyncClient::abort(ErrorKind why) {
  if (!in_flight_)
    return;
  Decision decision;
  decision.error = why;
  decision.error_message =
      why == ErrorKind::timeout ? "no final reply within --timeout" : "request abandoned";
  finish(std::move(decision));
}

void AsyncClient::start_command(size_t argc) {
  if (step_commands_++ == 0) {
    step_.begin(argc);
  } else {
    step_.then(argc);
  }
}

void AsyncClient::send(const std::vector<std::string_view>& argv) {
  start_command(argv.size());
  for (std::string_view arg : argv)
    step_.add(arg);
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
  add_eval(false);
}

void AsyncClient::add_eval(bool with_source) {
  const LoadedScript& script = *pending_eval_.script;
  start_command(3 + pending_eval_.keys.size() + pending_eval_.args.size());
  step_.add(with_source ? "EVAL" : "EVALSHA");
  step_.add(with_source ? script.source : script.sha);
  char count[24];
  auto [end, ec] = std::to_chars(count, count + sizeof count, pending_eval_.keys.size());
  step_.add(std::string_view(count, static_cast<size_t>(end - count)));
  for (const std::string& key : pending_eval_.keys)
    step_.add(key);
  for (const std::string& arg : pending_eval_.args)
    step_.add(arg);
}

void AsyncClient::dispatch_step() {
  if (!in_flight_ || step_commands_ == 0)
    return;
  if (!connection_->send(step_.text(), step_commands_, this, generation_)) {
    if (connection_->unreachable()) {
      fail(ErrorKind::connection, fmt::format("cannot connect to {}: {}",
                                              connection_->endpoint().display(),
                                              connection_->last_error()));
      return;
    }
    waiting_ = true;  // lost: the step leaves once the connection is made again
    connection_->when_ready(this);
    return;
  }
  replies_left_ = step_commands_;
  step_commands_ = 0;
  step_.clear();
}

void AsyncClient::on_reply(uint64_t tag, ReplyPtr reply, const std::string& lost_why) {
  if (!in_flight_ || tag != generation_)
    return;  // settled already
  if (!reply) {
    fail(ErrorKind::connection_lost,
         fmt::format("connection to {} lost: {}", connection_->endpoint().display(), lost_why));
    return;
  }
  --replies_left_;
  deliver(std::move(reply));
  if (in_flight_ && replies_left_ == 0)
    dispatch_step();
}

void AsyncClient::deliver(ReplyPtr reply) {
  if (pending_eval_.script != nullptr && !pending_eval_.reloaded && is_noscript(reply.get())) {
    // The script cache was flushed (restart, failover, SCRIPT FLUSH): EVAL loads it again.
    pending_eval_.reloaded = true;
    target_.stats.script_reloads.fetch_add(1, std::memory_order_relaxed);
    add_eval(true);
    return;
  }
  if (is_error(reply.get())) {
    const LoadedScript* script = strategy_->script();
    fail(ErrorKind::server_error,
         script ? fmt::format("script {} replied {}", script->name, describe_reply(reply.get()))
                : fmt::format("the server replied {}", describe_reply(reply.get())));
    return;
  }
  if (auto decision = strategy_->on_reply(state_, *reply, *this))
    finish(std::move(*decision));
}

void AsyncClient::finish(Decision decision) {
  in_flight_ = false;
  ++generation_;
  if (waiting_) {
    waiting_ = false;
    connection_->forget(this);
  }
  listener_.on_decision(slot_, std::move(decision));
}

void AsyncClient::fail(ErrorKind kind, std::string message) {
  if (!in_flight_)
    return;
  Decision decision;
  decision.error = kind;
  decision.error_message = std::move(message);
  finish(std::move(decision));
}

}  // namespace rlcheck::redis
