#pragma once
// A tiny HTTP/1.1 server on 127.0.0.1 and a free port, for what a real limiter should not do:
// the same canned response to every request (429 with a fractional Retry-After, 500, ...),
// closing the connection right after the request (the client sees a reset), or never answering
// (a stall), or whatever a handler decides per request (a limiter of the test's own). It records
// every request it read so tests can see what rlcheck sent. One thread, one poll loop; the
// destructor stops and joins it.

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/loopback_listener.hpp"

namespace rlcheck::testing {

struct ReceivedRequest {
  std::string method;
  std::string target;  // as on the request line: /path?query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header named `name` (case-insensitive), or "" when there is none.
  std::string header(const std::string& name) const;
};

// What the server answers in Mode::reply (Content-Length is added).
struct CannedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class FakeHttpServer {
 public:
  enum class Mode {
    reply,  // the canned response, connection kept alive
    reset,  // read the request, then close the connection without a byte
    stall,  // read the request, never answer (the connection stays open until stop)
  };

  using Response = CannedResponse;
  // Decides each request's response, on the server's thread, one request at a time.
  using Handler = std::function<Response(const ReceivedRequest&)>;

  explicit FakeHttpServer(Mode mode, Response response = {});
  explicit FakeHttpServer(Handler handler);
  ~FakeHttpServer();
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  int port() const { return listener_.port; }
  // http://127.0.0.1:PORT + path
  std::string url(const std::string& path = "/") const;
  // A copy of the requests read so far, in arrival order.
  std::vector<ReceivedRequest> requests() const;

 private:
  struct Connection {
    int fd = -1;
    std::string in;
    bool stalled = false;
  };

  void serve();
  // Parses and answers every complete request in `connection.in`; false: close it.
  bool handle(Connection& connection);
  static std::string reply_of(const Response& response);

  Mode mode_;
  Response response_;
  Handler handler_;
  LoopbackListener listener_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<ReceivedRequest> requests_;
  std::thread thread_;
};

}  // namespace rlcheck::testing
