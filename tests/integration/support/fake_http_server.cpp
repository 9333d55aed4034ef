#include "support/fake_http_server.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <stdexcept>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rlcheck::testing {
namespace {

constexpr size_t k_max_connections = 512;
constexpr size_t k_max_request_bytes = 1 << 20;
constexpr int k_write_wait_ms = 2000;

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos)
    return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// Writes all of `data` to a non-blocking socket; false if the peer is gone or too slow.
bool write_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return false;
    pollfd out{fd, POLLOUT, 0};
    if (poll(&out, 1, k_write_wait_ms) <= 0)
      return false;
  }
  return true;
}

void close_with_reset(int fd) {
  const linger hard{1, 0};  // RST instead of FIN: the client sees "connection reset"
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  close(fd);
}

}  // namespace

std::string ReceivedRequest::header(const std::string& name) const {
  for (const auto& [field, value] : headers) {
    if (same_name(field, name))
      return value;
  }
  return {};
}

FakeHttpServer::FakeHttpServer(Mode mode, Response response)
    : mode_(mode), response_(std::move(response)) {
  listener_ = listen_on_loopback("fake HTTP server", true);
  thread_ = std::thread([this] { serve(); });
}

FakeHttpServer::~FakeHttpServer() {
  stop_ = true;
  [[maybe_unused]] const ssize_t n = write(listener_.wake_pipe[1], "x", 1);
  thread_.join();
  close(listener_.fd);
  close(listener_.wake_pipe[0]);
  close(listener_.wake_pipe[1]);
}

FakeHttpServer::FakeHttpServer(Handler handler) : mode_(Mode::reply), handler_(std::move(handler)) {
  listener_ = listen_on_loopback("fake HTTP server", true);
  thread_ = std::thread([this] { serve(); });
}

std::string FakeHttpServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(listener_.port) + path;
}

std::vector<ReceivedRequest> FakeHttpServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

std::string FakeHttpServer::reply_of(const Response& response) {
  std::string reply =
      "HTTP/1.1 " + std::to_string(response.status) + " Canned\r\nConnection: keep-alive\r\n";
  for (const auto& [name, value] : response.headers)
    reply += name + ": " + value + "\r\n";
  reply += "Content-Length: " + std::to_string(response.body.size()) + "\r\n\r\n";
  return reply + response.body;
}

bool FakeHttpServer::handle(Connection& connection) {
  while (!connection.stalled) {
    const size_t end = connection.in.find("\r\n\r\n");
    if (end == std::string::npos)
      return connection.in.size() < k_max_request_bytes;
    ReceivedRequest request;
    size_t line_end = connection.in.find("\r\n");
    const std::string request_line = connection.in.substr(0, line_end);
    const size_t space1 = request_line.find(' ');
    const size_t space2 = request_line.find(' ', space1 + 1);
    if (space1 == std::string::npos || space2 == std::string::npos)
      return false;
    request.method = request_line.substr(0, space1);
    request.target = request_line.substr(space1 + 1, space2 - space1 - 1);
    size_t content_length = 0;
    bool close_after = false;
    while (line_end < end) {
      const size_t next = connection.in.find("\r\n", line_end + 2);
      const std::string line = connection.in.substr(line_end + 2, next - line_end - 2);
      line_end = next;
      const size_t colon = line.find(':');
      if (colon == std::string::npos)
        continue;
      request.headers.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
      const auto& [name, value] = request.headers.back();
      if (same_name(name, "Content-Length"))
        content_length = std::stoul(value);
      if (same_name(name, "Connection") && same_name(value, "close"))
        close_after = true;
    }
    if (content_length > k_max_request_bytes)
      return false;
    if (connection.in.size() < end + 4 + content_length)
      return true;  // the body is still on its way
    request.body = connection.in.substr(end + 4, content_length);
    connection.in.erase(0, end + 4 + content_length);
    const std::string reply = reply_of(handler_ ? handler_(request) : response_);
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(std::move(request));
    }
    switch (mode_) {
      case Mode::reset:
        return false;
      case Mode::stall:
        connection.stalled = true;
        connection.in.clear();
        return true;
      case Mode::reply:
        if (!write_all(connection.fd, reply) || close_after)
          return false;
        break;
    }
  }
  connection.in.clear();  // a stalled connection: whatever else comes is ignored
  return true;
}

void FakeHttpServer::serve() {
  std::vector<Connection> connections;
  while (!stop_) {
    std::vector<pollfd> fds{{listener_.wake_pipe[0], POLLIN, 0}, {listener_.fd, POLLIN, 0}};
    for (const Connection& connection : connections)
      fds.push_back({connection.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      break;
    if (fds[0].revents != 0)
      break;
    std::vector<bool> keep(connections.size(), true);
    for (size_t i = 0; i < connections.size(); ++i) {
      if (fds[i + 2].revents == 0)
        continue;
      char buffer[16384];
      const ssize_t got = recv(connections[i].fd, buffer, sizeof buffer, 0);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        keep[i] = false;
        continue;
      }
      if (got > 0)
        connections[i].in.append(buffer, static_cast<size_t>(got));
      keep[i] = handle(connections[i]);
    }
    std::vector<Connection> kept;
    for (size_t i = 0; i < connections.size(); ++i) {
      if (keep[i]) {
        kept.push_back(std::move(connections[i]));
      } else if (mode_ == Mode::reset) {
        close_with_reset(connections[i].fd);
      } else {
        close(connections[i].fd);
      }
    }
    connections = std::move(kept);
    if (fds[1].revents & POLLIN) {
      while (true) {
        const int fd = accept4(listener_.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
          break;
        if (connections.size() >= k_max_connections) {
          close(fd);
          continue;
        }
        connections.push_back({fd, {}, false});
      }
    }
  }
  for (const Connection& connection : connections)
    close(connection.fd);
}

}  // namespace rlcheck::testing
