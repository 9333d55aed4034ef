#include "redis/async_client.hpp"

#include <algorithm>

#include <event2/event.h>
#include <fmt/format.h>

#include "engine/event_time.hpp"
#include "redis/reply.hpp"

namespace rlcheck::redis {

using engine::Decision;
using engine::ErrorKind;

namespace {

constexpr auto k_retry_later = std::chrono::milliseconds(20);  // after TRYAGAIN, CLUSTERDOWN
constexpr std::string_view k_asking = "*1\r\n$6\r\nASKING\r\n";

std::string_view error_text(const redisReply* reply) {
  return std::string_view(reply->str, reply->len);
}

// The client's connection `index`, told first which source address it leaves from: client c
// (of the whole run, across loops) shares connection c / pipeline, bound to that number's
// address, so the run's connections spread over the addresses evenly.
Connection& bound_connection(NodePool& pool, const RunTarget& target, int index, int client_id) {
  if (!target.source_addresses.empty()) {
    const auto connection = static_cast<size_t>(client_id / std::max(1, target.pipeline));
    pool.source_for(index, target.source_addresses[connection % target.source_addresses.size()]);
  }
  return pool.connection(index);
}

}  // namespace

AsyncClient::AsyncClient(NodePool& pool, engine::ClientListener& listener, int slot,
                         RunTarget& target, int client_id)
    : pool_(&pool),
      listener_(listener),
      slot_(slot),
      target_(target),
      index_(slot / std::max(1, target.pipeline)),
      connection_(&bound_connection(pool, target, index_, client_id)),
      rng_(engine::client_seed(target.seed, client_id)) {}

AsyncClient::AsyncClient(event_base* base, engine::ClientListener& listener, int slot,
                         RunTarget& target, int client_id)
    : own_pool_(std::make_unique<NodePool>(base, target, false)),
      pool_(own_pool_.get()),
      listener_(listener),
      slot_(slot),
      target_(target),
      index_(0),
      connection_(&own_pool_->connection(0)),
      rng_(engine::client_seed(target.seed, client_id)) {}

AsyncClient::~AsyncClient() {
  pool_->forget(this, index_);
  if (retry_timer_ != nullptr)
    event_free(retry_timer_);
}

void AsyncClient::connect() {
  // A cluster client connects to every master first: any key may live on any of them.
  const auto connections = pool_->every_master(index_);
  connecting_ = true;
  connect_waits_ = static_cast<int>(connections.size());
  for (Connection* connection : connections) {
    if (!connecting_)
      break;  // one was unreachable
    connection->when_ready(this);
  }
}

void AsyncClient::on_ready() {
  if (connecting_) {
    if (--connect_waits_ == 0) {
      connecting_ = false;
      listener_.on_connected(slot_, true, {});
    }
    return;
  }
  if (waiting_) {
    waiting_ = false;
    dispatch_step();
  }
}

void AsyncClient::on_unreachable(const std::string&) {
  std::string message = connection_->unreachable_message();
  if (connecting_) {
    connecting_ = false;
    pool_->forget(this, index_);
    listener_.on_connected(slot_, false, message);
    return;
  }
  if (waiting_) {
    waiting_ = false;
    fail(ErrorKind::connection, std::move(message));
  }
}

void AsyncClient::start(const engine::RequestTicket& ticket) {
  start_with(*target_.strategy, ticket);
}

void AsyncClient::start_with(const Strategy& strategy, const engine::RequestTicket& ticket) {
  strategy_ = &strategy;
  // Field by field: the key string keeps its capacity from request to request.
  state_.seq = ticket.seq;
  state_.identity = ticket.identity;
  state_.cost = ticket.cost;
  state_.step = 0;
  state_.bucket = 0;
  engine::copy_clock(state_.clock, ticket.clock);
  state_.rng = &rng_;
  state_.key.clear();
  pending_eval_.script = nullptr;
  in_flight_ = true;
  step_->clear();
  step_commands_ = 0;
  step_slot_.reset();
  replies_left_ = 0;
  redirects_ = 0;
  if (connection_->unreachable() && !pool_->cluster()) {
    fail(ErrorKind::connection, connection_->unreachable_message());
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
  if (waiting_ && why == ErrorKind::timeout) {
    // It never left: the connection was lost and not made again in time.
    decision.error = ErrorKind::connection;
    decision.error_message =
        fmt::format("no connection to {} within --timeout: {}", connection_->endpoint().display(),
                    connection_->last_error());
  }
  finish(std::move(decision));
}

void AsyncClient::start_command(size_t argc) {
  if (step_commands_++ == 0) {
    step_->begin(argc);
  } else {
    step_->then(argc);
  }
}

void AsyncClient::send(const std::vector<std::string_view>& argv) {
  start_command(argv.size());
  for (std::string_view arg : argv)
    step_->add(arg);
  if (pool_->cluster() && !step_slot_ && argv.size() >= 2)
    step_slot_ = key_slot(argv[1]);
}

CommandBuffer& AsyncClient::begin_eval(const LoadedScript& script, const EvalHead& head,
                                       std::string_view first_key) {
  if (step_commands_++ == 0)
    step_->clear();
  pending_eval_.script = &script;
  pending_eval_.reloaded = false;
  pending_eval_.argc = head.argc;
  pending_eval_.tail_begin = step_->size() + head.count_at;
  step_->append_raw(head.text);
  if (pool_->cluster() && !step_slot_)
    step_slot_ = key_slot(first_key);
  return *step_;
}

void AsyncClient::end_eval() {
  pending_eval_.tail_end = step_->size();
}

void AsyncClient::eval_with_source() {
  const std::string_view sent = sent_->text();
  const std::string_view tail =
      sent.substr(pending_eval_.tail_begin, pending_eval_.tail_end - pending_eval_.tail_begin);
  if (step_commands_++ == 0)
    step_->clear();
  step_->then(pending_eval_.argc);
  step_->add("EVAL");
  step_->add(pending_eval_.script->source);
  pending_eval_.tail_begin = step_->size();
  step_->append_raw(tail);
  pending_eval_.tail_end = step_->size();
  if (pool_->cluster())
    step_slot_ = sent_slot_;
}

void AsyncClient::dispatch_step() {
  if (!in_flight_ || step_commands_ == 0)
    return;
  if (pool_->cluster() && step_slot_)
    connection_ = &pool_->connection(index_, *step_slot_);
  if (!connection_->send(step_->text(), step_commands_, this, generation_)) {
    if (connection_->unreachable() && !pool_->cluster()) {
      fail(ErrorKind::connection, connection_->unreachable_message());
      return;
    }
    waiting_ = true;  // not connected (yet, or again): the step leaves once it is
    connection_->when_ready(this);
    return;
  }
  replies_left_ = step_commands_;
  std::swap(step_, sent_);
  if (pool_->cluster()) {
    sent_commands_ = step_commands_;
    sent_slot_ = step_slot_.value_or(sent_slot_);
    held_.clear();
    redirect_.reset();
    retry_later_ = false;
  }
  step_commands_ = 0;
  step_slot_.reset();
  step_->clear();
}

void AsyncClient::on_reply(uint64_t tag, ReplyPtr reply, const std::string& lost_why) {
  if (!in_flight_ || tag != generation_)
    return;  // settled already
  if (!reply) {
    const LossCause cause = connection_->loss_cause();
    fail(cause == LossCause::protocol    ? ErrorKind::protocol
         : cause == LossCause::too_large ? ErrorKind::too_large
                                         : ErrorKind::connection_lost,
         fmt::format("connection to {} lost: {}", connection_->endpoint().display(), lost_why));
    return;
  }
  if (skip_replies_ > 0) {
    --skip_replies_;
    return;
  }
  --replies_left_;
  if (pool_->cluster()) {
    on_cluster_reply(std::move(reply));
    return;
  }
  deliver(std::move(reply));
  if (in_flight_ && replies_left_ == 0)
    dispatch_step();
}

void AsyncClient::on_cluster_reply(ReplyPtr reply) {
  if (is_error(reply.get()) && !redirect_ && !retry_later_) {
    redirect_ = parse_redirect(error_text(reply.get()));
    retry_later_ = !redirect_ && is_retry_later(error_text(reply.get()));
  }
  held_.push_back(std::move(reply));
  if (replies_left_ > 0)
    return;
  if (redirect_ || retry_later_) {
    if (++redirects_ > k_most_redirects) {
      fail(ErrorKind::server_error,
           fmt::format("{} redirects without an answer; the last: {}", k_most_redirects,
                       describe_reply(held_.back().get())));
      return;
    }
    if (retry_later_) {
      target_.stats.tryagain.fetch_add(1, std::memory_order_relaxed);
      if (retry_timer_ == nullptr)
        retry_timer_ = evtimer_new(pool_->base(), &AsyncClient::on_retry_timer, this);
      const timeval later = engine::to_timeval(k_retry_later);
      evtimer_add(retry_timer_, &later);
      return;
    }
    NodeAddress to = redirect_->to;
    if (to.host.empty())
      to.host = connection_->endpoint().host;
    const bool asking = redirect_->kind == Redirect::Kind::ask;
    if (asking) {
      target_.stats.ask.fetch_add(1, std::memory_order_relaxed);
    } else {
      target_.stats.moved.fetch_add(1, std::memory_order_relaxed);
      pool_->moved(redirect_->slot, to);
    }
    if (asking)
      connection_ = &pool_->connection_to(to, index_);
    resend_step(asking);
    return;
  }
  std::vector<ReplyPtr> replies;
  replies.swap(held_);
  for (ReplyPtr& held : replies) {
    if (!in_flight_)
      break;
    deliver(std::move(held));
  }
  replies.clear();
  if (held_.empty())
    held_.swap(replies);  // keep the capacity
  if (in_flight_ && replies_left_ == 0)
    dispatch_step();
}

// Sends the redirected step again: after MOVED or TRYAGAIN where the slot map says now, after
// ASK to connection_ (the node the slot is moving to), behind ASKING.
void AsyncClient::resend_step(bool asking) {
  step_->clear();
  step_->append_raw(sent_->text());
  step_commands_ = sent_commands_;
  step_slot_ = asking ? std::nullopt : std::optional<uint16_t>(sent_slot_);
  if (asking && connection_->send(k_asking, 1, this, generation_))
    skip_replies_ = 1;
  dispatch_step();
}

void AsyncClient::on_retry_timer(int, short, void* self) {
  auto* client = static_cast<AsyncClient*>(self);
  if (!client->in_flight_)
    return;
  client->resend_step(false);
}

void AsyncClient::deliver(ReplyPtr reply) {
  if (pending_eval_.script != nullptr && !pending_eval_.reloaded && is_noscript(reply.get())) {
    // The script cache was flushed (restart, failover, SCRIPT FLUSH): EVAL loads it again.
    pending_eval_.reloaded = true;
    target_.stats.script_reloads.fetch_add(1, std::memory_order_relaxed);
    eval_with_source();
    return;
  }
  if (is_error(reply.get())) {
    const LoadedScript* script = strategy_->script();
    const std::string described = describe_reply(reply.get());
    if (is_crossslot(error_text(reply.get()))) {
      fail(ErrorKind::crossslot,
           fmt::format("{} touches keys of more than one hash slot, which Redis Cluster "
                       "refuses (declare every key in KEYS, with one {{hash tag}}): {}",
                       script ? fmt::format("script {}", script->name) : "the command", described));
      return;
    }
    fail(ErrorKind::server_error, script
                                      ? fmt::format("script {} replied {}", script->name, described)
                                      : fmt::format("the server replied {}", described));
    return;
  }
  if (auto decision = strategy_->on_reply(state_, *reply, *this)) {
    decision->received = connection_->last_read();
    finish(std::move(*decision));
  }
}

void AsyncClient::finish(Decision&& decision) {
  in_flight_ = false;
  ++generation_;
  skip_replies_ = 0;
  if (waiting_) {
    waiting_ = false;
    connection_->forget(this);
  }
  if (retry_timer_ != nullptr)
    evtimer_del(retry_timer_);
  if (pool_->cluster())
    decision.node = connection_->name();
  if (decision.outcome == engine::Outcome::allowed && pool_->releases() != nullptr)
    pool_->releases()->hold(state_, index_);
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
