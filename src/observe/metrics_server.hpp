#pragma once
// The /metrics endpoint: an HTTP server (libevent's evhttp) on a thread and an event loop of
// its own. GET /metrics answers with what `render` returns for the format the Accept header
// asks for; any other path is 404. `render` is called on the server's thread: it must only
// read what is safe to read from there (atomics, or state under its own lock).

#include <atomic>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "config/listen_address.hpp"
#include "observe/openmetrics.hpp"

namespace rlcheck::observe {

class MetricsServer {
 public:
  using Render = std::function<std::string(Format format)>;

  // Binds `address` (on the calling thread, so a port in use is known before anything runs)
  // and starts serving. The error says why it cannot listen ("Address already in use").
  static std::expected<std::unique_ptr<MetricsServer>, std::string> start(
      const config::ListenAddress& address, Render render);
  ~MetricsServer();  // stops serving and joins the thread
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The address bound, with the port the system chose for port 0.
  const config::ListenAddress& bound() const { return bound_; }

 private:
  MetricsServer() = default;
  struct Loop;

  config::ListenAddress bound_;
  std::unique_ptr<Loop> loop_;
  std::atomic<bool> stop_{false};
  std::jthread thread_;
};

}  // namespace rlcheck::observe
