#pragma once
// A loopback HTTP server whose every answer is raw bytes chosen by the test: chunked bodies,
// Connection: close, a close after the answer, a body that never ends, oversized headers. It
// reads each request whole (head and Content-Length body), asks the test's function for the
// answer, and counts the connections it accepted. One thread; the destructor stops it.

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/loopback_listener.hpp"

namespace rlcheck::testing {

struct RawAnswer {
  std::string bytes;         // written as they are
  bool close_after = false;  // then the server closes the connection
};

class RawHttpServer {
 public:
  // `answer(request, index)`: the answer to the `index`-th request (0-based) of a connection.
  using AnswerFunction = std::function<RawAnswer(const std::string& request, int index)>;
  explicit RawHttpServer(AnswerFunction answer);
  ~RawHttpServer();
  RawHttpServer(const RawHttpServer&) = delete;
  RawHttpServer& operator=(const RawHttpServer&) = delete;

  std::string url(const std::string& path = "/") const;
  int connections() const { return connections_.load(); }
  std::vector<std::string> requests() const;

 private:
  void serve();

  AnswerFunction answer_;
  LoopbackListener listener_;
  std::atomic<int> connections_{0};
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

}  // namespace rlcheck::testing
