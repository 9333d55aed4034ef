#pragma once
// One hiredis async connection on a worker's libevent loop, deciding requests with a
// Strategy. Replies are matched to requests by a generation number carried as privdata, so a
// reply that arrives after its request was settled (timeout, error mid-pipeline) is dropped.

#include <atomic>
#include <random>
#include <string>
#include <vector>

#include <hiredis/async.h>

#include "engine/client.hpp"
#include "redis/command_buffer.hpp"
#include "redis/endpoint.hpp"
#include "redis/strategy.hpp"
#include "redis/transport_stats.hpp"

namespace rlcheck::redis {

// Read-only for the run, shared by every connection; only `stats` is written.
struct RunTarget {
  Endpoint endpoint;
  std::vector<std::vector<std::string>> login;  // AUTH / SELECT, see login_commands
  const Strategy* strategy = nullptr;           // for start(); start_with() names its own
  uint64_t seed = 0;                            // connection c draws from seed ^ hash(c)
  TransportStats stats;                         // written by every connection
};

class AsyncClient final : public engine::Client, private DecisionIo {
 public:
  AsyncClient(event_base* base, engine::ClientListener& listener, int slot, RunTarget& target,
              int client_id);
  ~AsyncClient() override;
  AsyncClient(const AsyncClient&) = delete;
  AsyncClient& operator=(const AsyncClient&) = delete;

  void connect() override;
  void start(uint64_t seq) override;  // with the run's strategy
  // With another strategy: a server deciding for many identities, each with its own key.
  void start_with(const Strategy& strategy, uint64_t seq);
  void abort(engine::ErrorKind why) override;
  bool alive() const override { return context_ != nullptr && !dead_; }

 private:
  // The eval of the request in flight, kept to send it again as EVAL after NOSCRIPT. The
  // strings keep their capacity from request to request.
  struct PendingEval {
    const LoadedScript* script = nullptr;
    std::vector<std::string> keys;
    std::vector<std::string> args;
    bool reloaded = false;
  };

  void send(const std::vector<std::string_view>& argv) override;
  std::vector<std::string>& eval_keys() override;
  std::vector<std::string>& eval_args() override;
  void eval(const LoadedScript& script) override;
  void send_eval(bool with_source);
  // Sends the command in command_ with its replies tagged `generation`.
  void send_formatted(uintptr_t generation);

  void handle_reply(uintptr_t generation, redisReply* reply);
  void handle_login_reply(redisReply* reply);
  void finish(engine::Decision decision);
  void fail_connection(engine::ErrorKind kind, std::string message);

  static void on_reply(redisAsyncContext* context, void* reply, void* privdata);
  static void on_connect(const redisAsyncContext* context, int status);
  static void on_disconnect(const redisAsyncContext* context, int status);

  static constexpr uintptr_t k_login_generation = 0;

  event_base* base_;
  engine::ClientListener& listener_;
  int slot_;
  RunTarget& target_;
  std::mt19937_64 rng_;
  redisAsyncContext* context_ = nullptr;  // owned; hiredis frees it itself after a disconnect
  bool dead_ = false;
  bool closing_ = false;
  size_t login_replies_left_ = 0;
  uintptr_t generation_ = 1;  // of the request in flight; bumped when it is settled
  bool in_flight_ = false;
  const Strategy* strategy_ = nullptr;  // of the request in flight
  RequestState state_;
  PendingEval pending_eval_;
  CommandBuffer command_;
};

class AsyncClientFactory final : public engine::ClientFactory {
 public:
  explicit AsyncClientFactory(RunTarget& target) : target_(target) {}
  std::unique_ptr<engine::Client> make(event_base* base, engine::LoopShared*,
                                       engine::ClientListener& listener, int slot,
                                       int client_id) override {
    return std::make_unique<AsyncClient>(base, listener, slot, target_, client_id);
  }

 private:
  RunTarget& target_;
};

}  // namespace rlcheck::redis
