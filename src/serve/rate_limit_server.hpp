#pragma once
// `rlcheck serve`: an evhttp server that asks a Redis limiter, through a small pool of hiredis
// connections on the same loop, whether each request may pass, and answers 200 or 429 with
// the rate-limit headers. Redis outages answer 503 (fail-closed) or let requests through
// (fail-open), and are logged once per outage, not once per request.

#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "redis/async_client.hpp"
#include "serve/limit_headers.hpp"

struct evhttp;
struct evhttp_request;
struct evhttp_connection;
struct event;

namespace rlcheck::serve {

struct ServerOptions {
  std::string address = "127.0.0.1";
  int port = 8080;              // 0: any free port (see bound_port())
  std::string identity_header;  // empty: the client address
  // A request's cost in units (--cost-header), given to the strategy; empty: 1 each. A value
  // that is no cost from 1 to config::k_max_cost is answered 400.
  std::string cost_header;
  bool fail_open = false;
  redis::StrategyParams limiter;                   // kind, limit, window, burst, refill, script, id
  config::Nanos timeout{std::chrono::seconds(5)};  // per Redis decision
  int connections = 16;                            // Redis connections in the pool
  // concurrency: how long each admission is held before its reply; its place in the semaphore
  // is released once the reply is sent.
  int64_t hold_ms = 0;
  std::function<void(const std::string&)> log;  // one line per event worth telling
};

class RateLimitServer final : public engine::ClientListener {
 public:
  RateLimitServer(event_base* base, redis::RunTarget& redis_target, ServerOptions options);
  ~RateLimitServer() override;
  RateLimitServer(const RateLimitServer&) = delete;
  RateLimitServer& operator=(const RateLimitServer&) = delete;

  // Binds and starts serving on the caller's loop; on error, why.
  std::expected<void, std::string> start();
  int bound_port() const { return bound_port_; }

  void on_connected(int slot, bool ok, const std::string& error) override;
  void on_decision(int slot, engine::Decision&& decision) override;

 private:
  struct Connection;
  struct HeldReply;  // leaky-queue: an admission answered once its wait is over
  struct Pending {
    evhttp_request* request = nullptr;  // null once its HTTP connection closed
    evhttp_connection* connection = nullptr;
    std::unique_ptr<redis::Strategy> limiter;  // this identity's key; lives while in flight
    int32_t cost = 1;                          // --cost-header
    std::string key;                           // the identity's limiter key
    bool holds_place = false;                  // concurrency: admitted, not yet released
    bool release = false;  // concurrency: not a client's request but a place's release
  };

  static void on_request(evhttp_request* request, void* self);
  static void on_http_close(evhttp_connection* connection, void* self);
  static void on_reconnect_timer(int, short, void* self);
  static void on_decision_timeout(int, short, void* arg);
  static void on_hold_over(int, short, void* arg);

  void accept(evhttp_request* request);
  std::string identity_of(evhttp_request* request) const;
  // --cost-header's value: 1 when absent, nullopt when it is no cost.
  std::optional<int32_t> cost_of(evhttp_request* request) const;
  void dispatch();
  bool any_usable_connection() const;  // ready, or still connecting
  void answer_queue_as_outage();
  void respond(uint64_t id, const LimitResponse& response);
  // concurrency: frees request `id`'s place in `key`'s semaphore (queued as a Redis job).
  void release_place(const std::string& key, uint64_t id);
  // Answers after `hold_ms` (a queue's wait), or at once when it is 0.
  void respond_after(uint64_t id, LimitResponse response, int64_t hold_ms);
  std::unique_ptr<redis::Strategy> limiter_for(const std::string& identity) const;
  void note_outage(const std::string& why);
  void note_recovery();
  void open_connection(int slot);

  event_base* base_;
  redis::RunTarget& redis_target_;
  ServerOptions options_;
  Policy policy_;
  evhttp* http_ = nullptr;
  event* reconnect_timer_ = nullptr;
  int bound_port_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::unordered_map<evhttp_connection*, uint64_t> pending_by_connection_;
  std::deque<uint64_t> queue_;  // waiting for a free Redis connection
  std::unordered_map<uint64_t, std::unique_ptr<HeldReply>> held_;  // by request id
  uint64_t next_id_ = 1;
  bool in_outage_ = false;
};

}  // namespace rlcheck::serve
