#pragma once
// The engine's Redis client: one request at a time, decided by a Strategy, on a connection it
// shares with the other clients of its loop (--pipeline D: D clients per connection, so D
// requests in flight on it). Replies come back through the connection's FIFO, tagged with the
// request's generation, so a reply to a request already settled (timed out) is dropped and the
// connection carries on. A lost connection errs the request in flight (connection-lost); the
// next one waits until the connection is made again.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/client.hpp"
#include "engine/client_rng.hpp"
#include "redis/command_buffer.hpp"
#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "redis/node_pool.hpp"
#include "redis/strategy.hpp"
#include "redis/transport_stats.hpp"

namespace rlcheck::redis {

// Read-only for the run, shared by every connection; only `stats` is written.
struct RunTarget {
  Endpoint endpoint;
  const Strategy* strategy = nullptr;  // for start(); start_with() names its own
  uint64_t seed = 0;                   // connection c draws from seed ^ hash(c)
  int pipeline = 1;                    // clients per connection (--pipeline)
  std::optional<SlotMap> slots;        // a Redis Cluster: where each slot lives
  config::Nanos connect_timeout{std::chrono::seconds(5)};  // each connect, and each reconnect
  TransportStats stats;                                    // written by every connection
  // --source-address: client c's connection leaves from address (c / pipeline) mod count.
  std::vector<std::string> source_addresses;
  // --release-script: each admission's release, sent `hold` after its reply (null: none).
  const Strategy* release = nullptr;
  config::Nanos hold{0};
  config::Nanos release_timeout{std::chrono::seconds(5)};  // --timeout: each release's reply
  LeaseLog leases;  // what the releases came to, written as each loop settles
};

class AsyncClient final : public engine::Client,
                          private DecisionIo,
                          private ReplySink,
                          private ReadyWaiter {
 public:
  // A client of the run: on connection `slot / target.pipeline` of the loop's pool, which
  // reconnects after a loss.
  AsyncClient(NodePool& pool, engine::ClientListener& listener, int slot, RunTarget& target,
              int client_id);
  // A client with a connection of its own that is not made again once lost (rlcheck serve
  // replaces the client instead).
  AsyncClient(event_base* base, engine::ClientListener& listener, int slot, RunTarget& target,
              int client_id);
  ~AsyncClient() override;
  AsyncClient(const AsyncClient&) = delete;
  AsyncClient& operator=(const AsyncClient&) = delete;

  void connect() override;
  void start(const engine::RequestTicket& ticket) override;  // with the run's strategy
  // With another strategy: a server deciding for many identities, each with its own key.
  void start_with(const Strategy& strategy, const engine::RequestTicket& ticket);
  // Settles the request in flight as `why`; its reply, when it comes, is dropped.
  void abort(engine::ErrorKind why) override;
  bool alive() const override { return !connection_->unreachable(); }

  static constexpr int k_most_redirects = 16;  // per request, then it errs

 private:
  // The eval of the request in flight, to send again as EVAL after NOSCRIPT: its key count,
  // keys and args are the bytes [tail_begin, tail_end) of the step (once sent, of sent_).
  struct PendingEval {
    const LoadedScript* script = nullptr;
    size_t argc = 0;
    size_t tail_begin = 0;
    size_t tail_end = 0;
    bool reloaded = false;
  };

  // DecisionIo: commands join the step being built; it leaves when the strategy returns.
  void send(const std::vector<std::string_view>& argv) override;
  CommandBuffer& begin_eval(const LoadedScript& script, const EvalHead& head,
                            std::string_view first_key) override;
  void end_eval() override;
  // After NOSCRIPT: the eval sent, again as EVAL with the script's source.
  void eval_with_source();
  void start_command(size_t argc);

  // Sends the step built (or waits for the connection first).
  void dispatch_step();
  void on_reply(uint64_t tag, ReplyPtr reply, const std::string& lost_why) override;
  // Fetched a reply ahead: the buffer the next request is written into, and the keys and
  // constants the strategy copies into it (heap lines the object's prefetch misses). sent_'s
  // bytes are read again only after NOSCRIPT or a redirect.
  void warm_up() const override {
    __builtin_prefetch(step_->text().data(), 1);
    __builtin_prefetch(state_.cached.data());
  }
  // Cluster: a step's replies are held until all are in, then delivered, or the step is sent
  // again where MOVED / ASK point (TRYAGAIN, CLUSTERDOWN: again a little later).
  void on_cluster_reply(ReplyPtr reply);
  void resend_step(bool asking);
  static void on_retry_timer(int, short, void* self);
  void on_ready() override;
  void on_unreachable(const std::string& why) override;
  void deliver(ReplyPtr reply);
  void finish(engine::Decision&& decision);
  void fail(engine::ErrorKind kind, std::string message);

  std::unique_ptr<NodePool> own_pool_;  // the serve form's private connection
  NodePool* pool_;
  engine::ClientListener& listener_;
  int slot_;
  RunTarget& target_;
  int index_;               // of this client's connection to each node
  Connection* connection_;  // where the step goes (or went)
  // What every request touches comes first, together (Connection prefetches these lines).
  bool waiting_ = false;     // the request's step waits for the connection
  uint64_t generation_ = 1;  // of the request in flight; bumped when it is settled
  bool in_flight_ = false;
  const Strategy* strategy_ = nullptr;  // of the request in flight
  RequestState state_;
  PendingEval pending_eval_;
  // The step being built and the step sent (kept to send again: NOSCRIPT; in a cluster,
  // redirects) trade places by pointer when a step goes out.
  CommandBuffer buffers_[2];
  CommandBuffer* step_ = &buffers_[0];  // the commands of the step being built
  CommandBuffer* sent_ = &buffers_[1];  // the step sent
  size_t step_commands_ = 0;            // how many
  std::optional<uint16_t> step_slot_;   // cluster: the hash slot of its first key
  size_t replies_left_ = 0;             // of the step sent
  size_t skip_replies_ = 0;             // ASKING's +OK
  int redirects_ = 0;
  event* retry_timer_ = nullptr;
  engine::ClientRng rng_;    // for {uuid}
  int connect_waits_ = 0;    // connect(): connections not yet ready
  bool connecting_ = false;  // connect() waits for the connection
  // Cluster only: the step's count and slot, and its replies held until all are in.
  size_t sent_commands_ = 0;
  uint16_t sent_slot_ = 0;
  std::vector<ReplyPtr> held_;
  std::optional<Redirect> redirect_;
  bool retry_later_ = false;
};

class AsyncClientFactory final : public engine::ClientFactory {
 public:
  explicit AsyncClientFactory(RunTarget& target) : target_(target) {}
  std::unique_ptr<engine::LoopShared> make_loop_shared(event_base* base) override {
    return std::make_unique<NodePool>(base, target_, true);
  }
  std::unique_ptr<engine::Client> make(event_base*, engine::LoopShared* shared,
                                       engine::ClientListener& listener, int slot,
                                       int client_id) override {
    return std::make_unique<AsyncClient>(*static_cast<NodePool*>(shared), listener, slot, target_,
                                         client_id);
  }

 private:
  RunTarget& target_;
};

}  // namespace rlcheck::redis
