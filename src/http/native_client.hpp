#pragma once
// The native HTTP/1.1 client: one keep-alive connection per slot, owned by the worker's
// libevent loop, over the Redis transport's streams (plain or OpenSSL TLS). The request is
// serialised once per run (RequestTemplate) and the response read by ResponseParser; what a
// response means is decided by response_decision, as on the curl path. A connection the
// server closes (Connection: close, an idle close) is made again for the next request; a
// request that met a stale keep-alive connection is sent once more on a fresh one.
// With --source-address a client serves requests of every identity, each from its identity's
// address: it keeps one keep-alive connection per address it has needed (made when first
// needed, bound before connect), the ones not in use parked and watched for the server's close.

#include <sys/socket.h>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/client.hpp"
#include "engine/client_rng.hpp"
#include "http/http_requests.hpp"
#include "http/request_template.hpp"
#include "http/response_parser.hpp"
#include "net/stream.hpp"
#include "net/tls_stream.hpp"

struct event;
struct event_base;

namespace rlcheck::http {

// What every native client of a run shares, read-only: the URL split, the request serialised,
// the TLS context.
struct NativeRequests {
  const HttpRequests& requests;
  HttpUrl url;
  RequestTemplate request;
  std::shared_ptr<net::TlsContext> tls;  // https:// only
  std::string tls_error;                 // why the TLS context could not be made
};

// Per worker loop: the host's addresses (resolved at the first connect) and a read buffer.
class NativeLoop final : public engine::LoopShared {
 public:
  struct Address {
    sockaddr_storage storage;
    socklen_t length;
  };
  explicit NativeLoop(const NativeRequests& native) : native_(native) {}
  // The host's addresses; on error, why (and `resolved()` stays false: asked again next time).
  const std::vector<Address>& addresses(std::string& error);
  char* buffer() { return buffer_.data(); }
  size_t buffer_size() const { return buffer_.size(); }

 private:
  const NativeRequests& native_;
  std::vector<Address> addresses_;
  std::vector<char> buffer_ = std::vector<char>(64 * 1024);
};

class NativeHttpClient final : public engine::Client {
 public:
  NativeHttpClient(event_base* base, NativeLoop& loop, const NativeRequests& native,
                   engine::ClientListener& listener, int slot, int client_id);
  ~NativeHttpClient() override;
  NativeHttpClient(const NativeHttpClient&) = delete;
  NativeHttpClient& operator=(const NativeHttpClient&) = delete;

  void connect() override;
  void start(const engine::RequestTicket& ticket) override;
  void abort(engine::ErrorKind why) override;
  bool alive() const override { return true; }

 private:
  enum class Phase { idle, connecting, handshaking, sending, receiving };
  // An idle keep-alive connection from another source address, kept for its next request.
  struct Parked {
    std::unique_ptr<net::Stream> stream;
    event* idle_event = nullptr;  // readable: the server closed it (or broke protocol)
    bool reused = false;
  };
  static void on_io(int fd, short what, void* self);
  static void on_parked_io(int fd, short what, void* parked);
  void use_source(size_t source);
  void park();
  void unpark();
  static void drop(Parked& parked);
  void open_connection();
  void try_address();
  void on_connect_ready();
  void connection_ready();
  void progress();
  void send_some();
  void receive_some();
  void on_idle_readable();
  void connection_lost(const std::string& why);
  void close_connection();
  void watch(int fd);
  void want_write();
  void finish(engine::Decision&& decision);
  void fail(engine::ErrorKind kind, std::string message);

  event_base* base_;
  NativeLoop& loop_;
  const NativeRequests& native_;
  engine::ClientListener& listener_;
  int slot_;
  engine::ClientRng rng_;       // for {uuid}
  engine::RequestClock clock_;  // the request in flight's, for the time its response is read at
  size_t source_ = 0;  // --source-address: the index of the address the connection is bound to
  std::vector<std::unique_ptr<Parked>> parked_;  // by source index

  Phase phase_ = Phase::idle;
  bool in_flight_ = false;
  bool preconnecting_ = false;  // connect(): no request yet, on_connected pending
  int connecting_fd_ = -1;
  size_t address_index_ = 0;
  std::string connect_failure_;
  std::unique_ptr<net::Stream> stream_;
  event* read_event_ = nullptr;
  event* write_event_ = nullptr;
  bool reused_ = false;  // the connection answered a request before this one

  const std::string* request_ = nullptr;
  size_t written_ = 0;
  std::string scratch_;
  ResponseParser parser_;
};

// Makes native clients, or says why it cannot serve a target (the caller then uses curl).
class NativeClientFactory final : public engine::ClientFactory {
 public:
  explicit NativeClientFactory(const HttpRequests& requests, HttpUrl url);
  std::unique_ptr<engine::LoopShared> make_loop_shared(event_base*) override {
    return std::make_unique<NativeLoop>(native_);
  }
  std::unique_ptr<engine::Client> make(event_base* base, engine::LoopShared* shared,
                                       engine::ClientListener& listener, int slot,
                                       int client_id) override {
    return std::make_unique<NativeHttpClient>(base, static_cast<NativeLoop&>(*shared), native_,
                                              listener, slot, client_id);
  }

 private:
  NativeRequests native_;
};

}  // namespace rlcheck::http
