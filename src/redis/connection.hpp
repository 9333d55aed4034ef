#pragma once
// One Redis connection on a libevent loop: a net::Stream (plain or TLS) that RESP commands are
// written to, batched per loop pass, and replies parsed from with hiredis' reply reader alone.
// Redis answers in order, so a FIFO of who asked matches each reply to its sender (memtier's
// design). A lost connection hands every outstanding sender a null reply, and, when asked to,
// is made again with backoff (50 ms doubling to 1 s) and logged in as the first time.

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/ring_queue.hpp"
#include "config/duration.hpp"
#include "net/stream.hpp"
#include "redis/endpoint.hpp"
#include "redis/reply.hpp"
#include "redis/reply_reader.hpp"
#include "redis/transport_stats.hpp"

struct event;
struct event_base;

namespace rlcheck::net {
class TlsContext;
}  // namespace rlcheck::net

namespace rlcheck::redis {

// Receives the replies to the commands it sent.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // The reply to a command sent with `tag`, or null when the connection was lost before it
  // came (`lost_why` says how). The sink owns the reply.
  virtual void on_reply(uint64_t tag, ReplyPtr reply, const std::string& lost_why) = 0;
  // Its reply is next: the sink may prefetch what handling it will touch.
  virtual void warm_up() const {}
};

// Waits for a connection to become ready.
class ReadyWaiter {
 public:
  virtual ~ReadyWaiter() = default;
  virtual void on_ready() = 0;
  // The connection could not be made and will not be tried again.
  virtual void on_unreachable(const std::string& why) = 0;
};

// Why a connection was last lost: the transport, or a reply rlcheck would not read on.
enum class LossCause {
  transport,  // closed, reset, timed out, refused
  protocol,   // invalid RESP, or a reply to no command
  too_large,  // one reply over rlcheck's caps (k_max_reply_bytes, k_max_reply_elements)
};

struct ConnectionSettings {
  Endpoint endpoint;                                       // where, and how to log in
  std::shared_ptr<const net::TlsContext> tls;              // set for rediss://
  std::vector<std::vector<std::string>> login;             // AUTH, SELECT...: sent before PING
  config::Nanos connect_timeout{std::chrono::seconds(5)};  // connect, handshake and login
  bool reconnect = false;           // once ready, made again with backoff whenever lost
  TransportStats* stats = nullptr;  // reconnects counted here
  std::string source_address;       // --source-address: bound before connect (empty: none)
};

class Connection {
 public:
  Connection(event_base* base, ConnectionSettings settings);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts connecting (no-op unless idle). Readiness is told to the waiters.
  void open();
  bool ready() const { return state_ == State::ready; }
  // Never became ready, and will not be tried again.
  bool unreachable() const { return state_ == State::unreachable; }
  // Calls waiter->on_ready() once the connection is ready (at once if it is), or
  // on_unreachable(). A waiter that goes away first must forget().
  void when_ready(ReadyWaiter* waiter);
  void forget(ReadyWaiter* waiter);

  // Queues `commands` (RESP, `count` commands) for the end of this loop pass; `count` replies
  // go to sink->on_reply(tag, ...), in order. Only when ready(): false otherwise.
  bool send(std::string_view commands, size_t count, ReplySink* sink, uint64_t tag);
  // Replies that no command asked for (after MONITOR) go here; null: dropped.
  void set_push_sink(ReplySink* sink) { push_sink_ = sink; }

  // "host:port" (or the socket path): names the node in reports.
  const std::string& name() const { return name_; }
  const Endpoint& endpoint() const { return settings_.endpoint; }
  // Why the connection last failed or was lost; empty while it never did.
  const std::string& last_error() const { return last_error_; }
  LossCause loss_cause() const { return loss_cause_; }
  // When the bytes of the reply being handed over were read (taken after each read).
  std::chrono::steady_clock::time_point last_read() const { return last_read_; }
  // That, for a message naming the server: "cannot connect to URL: why", or "URL refused AUTH:
  // ..." when the login was refused.
  std::string unreachable_message() const;

 private:
  enum class State { idle, connecting, handshaking, logging_in, ready, backing_off, unreachable };
  struct Pending {
    ReplySink* sink = nullptr;  // null: a login reply
    uint64_t tag = 0;
  };

  void set_events(int fd);
  void drop_events();
  void on_socket(short what);
  void continue_handshake();
  void start_login();
  void handle_login_reply(redisReply* reply);
  void read_available();
  void dispatch(ReplyPtr reply);
  void schedule_flush();
  void flush();
  void lose(const std::string& why, LossCause cause = LossCause::transport);
  void become_ready();

  static void on_socket_event(int, short what, void* self);
  static void on_flush_event(int, short, void* self);
  static void on_timer_event(int, short, void* self);

  event_base* base_;
  ConnectionSettings settings_;
  std::string name_;
  State state_ = State::idle;
  bool was_ready_ = false;  // ready at least once: losses are followed by reconnects
  std::unique_ptr<net::Stream> stream_;
  std::unique_ptr<ReplyReader> reader_;
  event* socket_event_ = nullptr;  // EV_READ | EV_PERSIST on the stream's fd
  event* write_event_ = nullptr;   // EV_WRITE, armed while a write waits for the socket
  event* flush_event_ = nullptr;   // no fd: activated to write at the end of the pass
  event* timer_ = nullptr;         // connect deadline, or the backoff before a reconnect
  bool write_armed_ = false;
  bool flush_scheduled_ = false;
  bool write_waits_for_read_ = false;  // TLS: a write asked for the socket to be readable
  std::string out_;
  size_t out_sent_ = 0;
  base::RingQueue<Pending> pending_;
  size_t login_replies_left_ = 0;
  std::vector<ReadyWaiter*> waiters_;
  ReplySink* push_sink_ = nullptr;
  config::Nanos backoff_{0};
  std::string last_error_;
  LossCause loss_cause_ = LossCause::transport;
  std::chrono::steady_clock::time_point last_read_{};
};

// The commands that make a fresh connection ready: AUTH and SELECT where the endpoint asks.
std::vector<std::vector<std::string>> login_commands(const Endpoint& endpoint);

// The settings of a connection to `endpoint`: its login, and its TLS context for rediss://
// (on error: why the --tls-* files cannot be used). Reconnects and stats are the caller's.
std::expected<ConnectionSettings, std::string> connection_settings(const Endpoint& endpoint,
                                                                   config::Nanos connect_timeout);

}  // namespace rlcheck::redis
