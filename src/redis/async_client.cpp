#include "redis/async_client.hpp"

#include <algorithm>
#include <charconv>

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

// The start of the last EVALSHA a thread wrote ("*argc", EVALSHA, the sha, the key count),
// reused while the sha and the counts stay the same: the clients of a loop share one, warm in
// cache.
struct EvalHead {
  std::string sha;
  size_t key_count = 0;
  size_t argc = 0;
  CommandBuffer text;
};
thread_local EvalHead t_eval_head;

// Appends "*argc", the verb, the script (sha or source) and the key count.
void write_eval_head(CommandBuffer& out, std::string_view verb, std::string_view script,
                     size_t key_count, size_t argc) {
  out.then(argc);
  out.add(verb);
  out.add(script);
  char count[24];
  auto [end, ec] = std::to_chars(count, count + sizeof count, key_count);
  out.add(std::string_view(count, static_cast<size_t>(end - count)));
}

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
      rng_(std::make_unique<std::mt19937_64>(engine::client_seed(target.seed, client_id))) {}

AsyncClient::AsyncClient(event_base* base, engine::ClientListener& listener, int slot,
                         RunTarget& target, int client_id)
    : own_pool_(std::make_unique<NodePool>(base, target, false)),
      pool_(own_pool_.get()),
      listener_(listener),
      slot_(slot),
      target_(target),
      index_(0),
      connection_(&own_pool_->connection(0)),
      rng_(std::make_unique<std::mt19937_64>(engine::client_seed(target.seed, client_id))) {}

AsyncClient::~AsyncClient() {
  pool_->forget(this);
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
    pool_->forget(this);
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
  state_.step = 0;
  state_.bucket = 0;
  state_.clock = ticket.clock;
  state_.rng = rng_.get();
  state_.key.clear();
  pending_eval_.script = nullptr;
  in_flight_ = true;
  step_.clear();
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
    step_.begin(argc);
  } else {
    step_.then(argc);
  }
}

void AsyncClient::send(const std::vector<std::string_view>& argv) {
  start_command(argv.size());
  for (std::string_view arg : argv)
    step_.add(arg);
  if (pool_->cluster() && !step_slot_ && argv.size() >= 2)
    step_slot_ = key_slot(argv[1]);
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
  const size_t key_count = pending_eval_.keys.size();
  const size_t argc = 3 + key_count + pending_eval_.args.size();
  if (step_commands_++ == 0)
    step_.clear();
  if (with_source) {
    write_eval_head(step_, "EVAL", script.source, key_count, argc);  // after NOSCRIPT only
  } else {
    EvalHead& head = t_eval_head;
    if (head.sha != script.sha || head.key_count != key_count || head.argc != argc) {
      head.sha = script.sha;
      head.key_count = key_count;
      head.argc = argc;
      head.text.clear();
      write_eval_head(head.text, "EVALSHA", script.sha, key_count, argc);
    }
    step_.append_raw(head.text.text());
  }
  for (const std::string& key : pending_eval_.keys)
    step_.add(key);
  for (const std::string& arg : pending_eval_.args)
    step_.add(arg);
  if (pool_->cluster() && !step_slot_ && !pending_eval_.keys.empty())
    step_slot_ = key_slot(pending_eval_.keys.front());
}

void AsyncClient::dispatch_step() {
  if (!in_flight_ || step_commands_ == 0)
    return;
  if (pool_->cluster() && step_slot_)
    connection_ = &pool_->connection(index_, *step_slot_);
  if (!connection_->send(step_.text(), step_commands_, this, generation_)) {
    if (connection_->unreachable() && !pool_->cluster()) {
      fail(ErrorKind::connection, connection_->unreachable_message());
      return;
    }
    waiting_ = true;  // not connected (yet, or again): the step leaves once it is
    connection_->when_ready(this);
    return;
  }
  replies_left_ = step_commands_;
  if (pool_->cluster()) {
    std::swap(sent_, step_);
    sent_commands_ = step_commands_;
    sent_slot_ = step_slot_.value_or(sent_slot_);
    held_.clear();
    redirect_.reset();
    retry_later_ = false;
  }
  step_commands_ = 0;
  step_slot_.reset();
  step_.clear();
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
  step_.clear();
  step_.append_raw(sent_.text());
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
    add_eval(true);
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

void AsyncClient::finish(Decision decision) {
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
