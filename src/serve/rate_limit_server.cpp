#include "serve/rate_limit_server.hpp"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <sys/socket.h>

#include <charconv>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "config/cost_plan.hpp"
#include "engine/event_time.hpp"
#include "redis/strategies/script_strategy.hpp"
#include "serve/semaphore_release.hpp"

namespace rlcheck::serve {
namespace {

constexpr int k_listen_backlog = 65535;

using engine::to_timeval;

constexpr auto k_reconnect_every = std::chrono::milliseconds(500);

const char* reason_of(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 429:
      return "Too Many Requests";
    case 503:
      return "Service Unavailable";
    default:
      return "";
  }
}

}  // namespace

struct RateLimitServer::Connection {
  RateLimitServer* server = nullptr;
  int slot = 0;
  std::unique_ptr<redis::AsyncClient> client;
  event* timeout = nullptr;
  bool ready = false;  // logged in and answering
  bool busy = false;
  uint64_t pending_id = 0;

  bool idle() const { return client && client->alive() && ready && !busy; }
};

struct RateLimitServer::HeldReply {
  RateLimitServer* server = nullptr;
  uint64_t id = 0;
  LimitResponse response;
  event* timer = nullptr;
  ~HeldReply() {
    if (timer != nullptr)
      event_free(timer);
  }
};

RateLimitServer::RateLimitServer(event_base* base, redis::RunTarget& redis_target,
                                 ServerOptions options)
    : base_(base), redis_target_(redis_target), options_(std::move(options)) {
  const redis::StrategyParams& limiter = options_.limiter;
  policy_ =
      policy_of(limiter.kind, limiter.limit, limiter.window_ms, limiter.burst, limiter.refill);
}

RateLimitServer::~RateLimitServer() {
  held_.clear();  // their timers never fire now
  if (http_ != nullptr)
    evhttp_free(http_);  // may call on_http_close: members still alive
  for (auto& connection : connections_) {
    connection->client.reset();
    if (connection->timeout != nullptr)
      event_free(connection->timeout);
  }
  if (reconnect_timer_ != nullptr)
    event_free(reconnect_timer_);
}

std::expected<void, std::string> RateLimitServer::start() {
  http_ = evhttp_new(base_);
  evhttp_set_gencb(http_, &RateLimitServer::on_request, this);
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH |
                                        EVHTTP_REQ_OPTIONS);
  evhttp_bound_socket* bound = evhttp_bind_socket_with_handle(
      http_, options_.address.c_str(), static_cast<ev_uint16_t>(options_.port));
  if (bound == nullptr) {
    return std::unexpected(
        fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)",
                    options_.address, options_.port));
  }
  // libevent listens with a backlog of 128: a burst of thousands of connections overflows it,
  // and the connections dropped wait out SYN retransmissions (1 s, 3 s, 7 s, ...). Listening
  // again raises it, up to the kernel's net.core.somaxconn.
  listen(evhttp_bound_socket_get_fd(bound), k_listen_backlog);
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  getsockname(evhttp_bound_socket_get_fd(bound), reinterpret_cast<sockaddr*>(&address), &length);
  bound_port_ = address.ss_family == AF_INET6
                    ? ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port)
                    : ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);

  for (int slot = 0; slot < options_.connections; ++slot) {
    auto connection = std::make_unique<Connection>();
    connection->server = this;
    connection->slot = slot;
    connection->timeout =
        evtimer_new(base_, &RateLimitServer::on_decision_timeout, connection.get());
    connections_.push_back(std::move(connection));
    open_connection(slot);
  }
  reconnect_timer_ = event_new(base_, -1, EV_PERSIST, &RateLimitServer::on_reconnect_timer, this);
  const timeval every = to_timeval(k_reconnect_every);
  event_add(reconnect_timer_, &every);
  return {};
}

void RateLimitServer::open_connection(int slot) {
  Connection& connection = *connections_[static_cast<size_t>(slot)];
  connection.ready = false;
  connection.busy = false;
  connection.client = std::make_unique<redis::AsyncClient>(base_, *this, slot, redis_target_, slot);
  connection.client->connect();
}

void RateLimitServer::on_request(evhttp_request* request, void* self) {
  static_cast<RateLimitServer*>(self)->accept(request);
}

void RateLimitServer::accept(evhttp_request* request) {
  const uint64_t id = next_id_++;
  Pending& pending = pending_[id];
  pending.request = request;
  pending.connection = evhttp_request_get_connection(request);
  const std::string identity = identity_of(request);
  pending.key = fmt::format("rlcheck:serve:{}:{}", options_.limiter.instance_id, identity);
  pending.limiter = limiter_for(identity);
  if (!options_.cost_header.empty()) {
    const auto cost = cost_of(request);
    if (!cost) {
      respond(id, {400,
                   {},
                   fmt::format("{{\"error\": \"{}: expected a cost from 1 to {}\"}}",
                               options_.cost_header, config::k_max_cost)});
      return;
    }
    pending.cost = *cost;
  }
  pending_by_connection_[pending.connection] = id;
  evhttp_connection_set_closecb(pending.connection, &RateLimitServer::on_http_close, this);

  // A connection that is ready, or still connecting (at start-up, after a reconnect), will
  // take the request; only when every one is down is it an outage right away.
  if (!any_usable_connection()) {
    respond(id, outage_response(options_.fail_open));
    return;
  }
  queue_.push_back(id);
  dispatch();
}

std::string RateLimitServer::identity_of(evhttp_request* request) const {
  if (!options_.identity_header.empty()) {
    const char* value = evhttp_find_header(evhttp_request_get_input_headers(request),
                                           options_.identity_header.c_str());
    if (value != nullptr)
      return value;
  }
  char* host = nullptr;
  ev_uint16_t port = 0;
  evhttp_connection_get_peer(evhttp_request_get_connection(request), &host, &port);
  return host != nullptr ? host : "unknown";
}

std::optional<int32_t> RateLimitServer::cost_of(evhttp_request* request) const {
  const char* value =
      evhttp_find_header(evhttp_request_get_input_headers(request), options_.cost_header.c_str());
  if (value == nullptr)
    return 1;
  int64_t cost = 0;
  const std::string_view text(value);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), cost);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || cost < 1 ||
      cost > config::k_max_cost)
    return std::nullopt;
  return static_cast<int32_t>(cost);
}

std::unique_ptr<redis::Strategy> RateLimitServer::limiter_for(const std::string& identity) const {
  redis::StrategyParams params = options_.limiter;
  params.weighted = !options_.cost_header.empty();
  params.key = fmt::format("rlcheck:serve:{}:{}", options_.limiter.instance_id, identity);
  return redis::make_strategy(params);
}

void RateLimitServer::dispatch() {
  while (!queue_.empty()) {
    Connection* free_connection = nullptr;
    for (auto& connection : connections_) {
      if (connection->idle()) {
        free_connection = connection.get();
        break;
      }
    }
    if (free_connection == nullptr)
      return;
    const uint64_t id = queue_.front();
    queue_.pop_front();
    auto it = pending_.find(id);
    if (it == pending_.end())
      continue;
    if (it->second.request == nullptr && !it->second.release) {  // the client left meanwhile
      pending_.erase(it);
      continue;
    }
    free_connection->busy = true;
    free_connection->pending_id = id;
    const timeval limit = to_timeval(options_.timeout);
    evtimer_add(free_connection->timeout, &limit);
    // Each identity has a limiter (and key) of its own: the request is its identity 0's.
    free_connection->client->start_with(*it->second.limiter,
                                        engine::RequestTicket{id, 0, {}, it->second.cost});
  }
}

bool RateLimitServer::any_usable_connection() const {
  for (const auto& connection : connections_) {
    if (connection->client && connection->client->alive())
      return true;
  }
  return false;
}

void RateLimitServer::answer_queue_as_outage() {
  while (!queue_.empty()) {
    const uint64_t id = queue_.front();
    queue_.pop_front();
    respond(id, outage_response(options_.fail_open));
  }
}

void RateLimitServer::on_connected(int slot, bool ok, const std::string& error) {
  Connection& connection = *connections_[static_cast<size_t>(slot)];
  connection.ready = ok;
  if (!ok) {
    note_outage(error);
    if (!any_usable_connection())
      answer_queue_as_outage();
    return;
  }
  note_recovery();
  dispatch();
}

void RateLimitServer::on_decision(int slot, engine::Decision&& decision) {
  Connection& connection = *connections_[static_cast<size_t>(slot)];
  if (!connection.busy)
    return;
  connection.busy = false;
  evtimer_del(connection.timeout);
  if (decision.outcome == engine::Outcome::error) {
    note_outage(decision.error_message);
    respond(connection.pending_id, outage_response(options_.fail_open));
  } else {
    note_recovery();
    int64_t hold_ms = decision.hold_ms;
    auto it = pending_.find(connection.pending_id);
    if (it != pending_.end() && !it->second.release &&
        options_.limiter.kind == config::Strategy::concurrency &&
        decision.outcome == engine::Outcome::allowed) {
      it->second.holds_place = true;
      hold_ms = options_.hold_ms;
    }
    respond_after(connection.pending_id, limit_response(decision, policy_), hold_ms);
  }
  dispatch();
}

void RateLimitServer::respond(uint64_t id, const LimitResponse& response) {
  auto it = pending_.find(id);
  if (it == pending_.end())
    return;
  Pending& pending = it->second;
  if (pending.request != nullptr) {
    evkeyvalq* headers = evhttp_request_get_output_headers(pending.request);
    for (const auto& [name, value] : response.headers) {
      evhttp_add_header(headers, name.c_str(), value.c_str());
    }
    evbuffer* body = evbuffer_new();
    evbuffer_add(body, response.body.data(), response.body.size());
    evhttp_send_reply(pending.request, response.status, reason_of(response.status), body);
    evbuffer_free(body);
    auto by_connection = pending_by_connection_.find(pending.connection);
    if (by_connection != pending_by_connection_.end() && by_connection->second == id) {
      pending_by_connection_.erase(by_connection);
    }
  }
  // Released after the reply went out (or its client left): a cap bounds requests in progress.
  const bool holds_place = pending.holds_place;
  const std::string key = holds_place ? pending.key : std::string();
  pending_.erase(it);
  if (holds_place)
    release_place(key, id);
}

void RateLimitServer::release_place(const std::string& key, uint64_t id) {
  const uint64_t job = next_id_++;
  Pending& release = pending_[job];
  release.release = true;
  release.limiter = make_semaphore_release(
      key, redis::concurrency_member(options_.limiter.instance_id,
                                     std::to_string(options_.limiter.run), std::to_string(id)));
  queue_.push_back(job);
  dispatch();
}

void RateLimitServer::respond_after(uint64_t id, LimitResponse response, int64_t hold_ms) {
  if (hold_ms <= 0) {
    respond(id, response);
    return;
  }
  auto held = std::make_unique<HeldReply>();
  held->server = this;
  held->id = id;
  held->response = std::move(response);
  held->timer = evtimer_new(base_, &RateLimitServer::on_hold_over, held.get());
  // From now, not from when this loop iteration began (libevent's cached time): the request
  // leaves at its turn, not early by however long the iteration has run.
  event_base_update_cache_time(base_);
  const timeval wait = to_timeval(std::chrono::milliseconds(hold_ms));
  evtimer_add(held->timer, &wait);
  held_[id] = std::move(held);
}

void RateLimitServer::on_hold_over(int, short, void* arg) {
  auto* held = static_cast<HeldReply*>(arg);
  RateLimitServer* self = held->server;
  const uint64_t id = held->id;
  self->respond(id, held->response);
  self->held_.erase(id);  // frees `held`
}

void RateLimitServer::on_http_close(evhttp_connection* connection, void* self_arg) {
  auto* self = static_cast<RateLimitServer*>(self_arg);
  auto it = self->pending_by_connection_.find(connection);
  if (it == self->pending_by_connection_.end())
    return;
  // libevent frees the request with its connection: never touch it again.
  auto pending = self->pending_.find(it->second);
  if (pending != self->pending_.end())
    pending->second.request = nullptr;
  self->pending_by_connection_.erase(it);
}

void RateLimitServer::on_decision_timeout(int, short, void* arg) {
  auto* connection = static_cast<Connection*>(arg);
  // Reports through on_decision (an error: answered as an outage) before it returns.
  connection->client->abort(engine::ErrorKind::timeout);
}

void RateLimitServer::on_reconnect_timer(int, short, void* self_arg) {
  auto* self = static_cast<RateLimitServer*>(self_arg);
  bool any_ready = false;
  for (auto& connection : self->connections_) {
    if (!connection->client->alive() && !connection->busy)
      self->open_connection(connection->slot);
    any_ready = any_ready || (connection->client->alive() && connection->ready);
  }
  // Requests queued while every connection was lost get their answer now, not a timeout.
  if (!any_ready)
    self->answer_queue_as_outage();
}

void RateLimitServer::note_outage(const std::string& why) {
  if (in_outage_)
    return;
  in_outage_ = true;
  if (options_.log) {
    options_.log(
        fmt::format("redis unavailable ({}); answering {} until it is back", why,
                    options_.fail_open ? "200 unchecked (fail-open)" : "503 (fail-closed)"));
  }
}

void RateLimitServer::note_recovery() {
  if (!in_outage_)
    return;
  in_outage_ = false;
  if (options_.log)
    options_.log("redis is back; limiting again");
}

}  // namespace rlcheck::serve
