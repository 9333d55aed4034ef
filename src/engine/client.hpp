#pragma once
// The engine's view of a target: one connection that decides one request at a time.
// Redis (redis/) and HTTP (http/) implement it; each hides its protocol behind it.

#include <cstdint>
#include <memory>
#include <string>

#include "engine/request_clock.hpp"
#include "engine/request_record.hpp"

struct event_base;

namespace rlcheck::engine {

// Callbacks from a client to the worker that owns it, on the worker's thread.
class ClientListener {
 public:
  virtual ~ClientListener() = default;
  // Once per connect(): ok, or why the connection could not be made ready.
  virtual void on_connected(int slot, bool ok, const std::string& error) = 0;
  // Once per start(): the limiter's decision, or an error.
  virtual void on_decision(int slot, Decision&& decision) = 0;
};

// What a request is: its number in the run, the identity it speaks for (whose key, {id}, source
// address; the worker draws it once, engine/identity_map) and the time it reads.
struct RequestTicket {
  uint64_t seq = 0;
  uint32_t identity = 0;
  RequestClock clock;
  int32_t cost = 1;  // its units (--cost), for {cost}
};

class Client {
 public:
  virtual ~Client() = default;
  // Opens the connection and readies it (auth, database); reports on_connected.
  virtual void connect() = 0;
  // Asks the limiter about request `ticket.seq` for `ticket.identity`, reading the time from
  // `ticket.clock` ({now_ms}, a fixed window's index); reports on_decision exactly once.
  virtual void start(const RequestTicket& ticket) = 0;
  // Gives up the request in flight: reports on_decision with `why` before returning. The
  // connection stays: a late reply is matched to its request and dropped (Redis: the FIFO of
  // its connection and a generation tag; HTTP: the easy handle).
  virtual void abort(ErrorKind why) = 0;
  // False once the connection failed, or was aborted for good.
  virtual bool alive() const = 0;
};

// Makes the clients of one run. Called from worker threads, so it must only read shared
// state. `slot` is the client's index within its worker, `client_id` unique across the run.
// State a factory shares among the clients of one loop (curl's multi handle, say). The worker
// owns it: made before the clients, destroyed after them and before the loop.
class LoopShared {
 public:
  virtual ~LoopShared() = default;
  // After the loop's last request is decided: work the loop still owes (redis: the releases
  // of held leases, --release-script) runs to its end before the run does.
  virtual void settle() {}
};

// The generator seed of client `client_id` of a run seeded `run_seed`: distinct per client,
// reproducible with --seed.
inline uint64_t client_seed(uint64_t run_seed, int client_id) {
  return run_seed ^ (static_cast<uint64_t>(client_id + 1) * 0x9E3779B97F4A7C15ULL);
}

class ClientFactory {
 public:
  virtual ~ClientFactory() = default;
  virtual std::unique_ptr<LoopShared> make_loop_shared(event_base*) { return nullptr; }
  virtual std::unique_ptr<Client> make(event_base* base, LoopShared* shared,
                                       ClientListener& listener, int slot, int client_id) = 0;
};

}  // namespace rlcheck::engine
