#include "support/raw_http_server.hpp"

#include <cstdlib>
#include <stdexcept>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rlcheck::testing {
namespace {

struct Connection {
  int fd = -1;
  std::string in;
  int answered = 0;
};

// The length of the first whole request in `in`, or 0 when it is not all there yet.
size_t whole_request(const std::string& in) {
  const size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos)
    return 0;
  size_t body = 0;
  std::string head = in.substr(0, head_end);
  for (char& c : head)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (const size_t at = head.find("\r\ncontent-length:"); at != std::string::npos)
    body = std::strtoul(head.c_str() + at + 17, nullptr, 10);
  const size_t total = head_end + 4 + body;
  return in.size() >= total ? total : 0;
}

void write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

RawHttpServer::RawHttpServer(AnswerFunction answer) : answer_(std::move(answer)) {
  listener_ = listen_on_loopback("raw http server", false);
  thread_ = std::thread([this] { serve(); });
}

RawHttpServer::~RawHttpServer() {
  stop_ = true;
  const char byte = 0;
  (void)::write(listener_.wake_pipe[1], &byte, 1);
  thread_.join();
  ::close(listener_.fd);
  ::close(listener_.wake_pipe[0]);
  ::close(listener_.wake_pipe[1]);
}

std::string RawHttpServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(listener_.port) + path;
}

std::vector<std::string> RawHttpServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

void RawHttpServer::serve() {
  std::vector<Connection> connections;
  while (!stop_) {
    std::vector<pollfd> polled{{listener_.fd, POLLIN, 0}, {listener_.wake_pipe[0], POLLIN, 0}};
    for (const Connection& connection : connections)
      polled.push_back({connection.fd, POLLIN, 0});
    if (::poll(polled.data(), polled.size(), -1) < 0)
      continue;
    if (polled[0].revents & POLLIN) {
      if (const int fd = ::accept4(listener_.fd, nullptr, nullptr, SOCK_CLOEXEC); fd >= 0) {
        connections.push_back({fd, {}, 0});
        ++connections_;
      }
    }
    for (size_t i = 2; i < polled.size(); ++i) {
      if (polled[i].revents == 0)
        continue;
      Connection& connection = connections[i - 2];
      char buffer[16384];
      const ssize_t n = ::recv(connection.fd, buffer, sizeof buffer, 0);
      bool close_it = n <= 0;
      if (n > 0)
        connection.in.append(buffer, static_cast<size_t>(n));
      while (!close_it) {
        const size_t length = whole_request(connection.in);
        if (length == 0)
          break;
        const std::string request = connection.in.substr(0, length);
        connection.in.erase(0, length);
        {
          std::lock_guard lock(mutex_);
          requests_.push_back(request);
        }
        const RawAnswer answer = answer_(request, connection.answered++);
        write_all(connection.fd, answer.bytes);
        close_it = answer.close_after;
      }
      if (close_it) {
        ::close(connection.fd);
        connection.fd = -1;
      }
    }
    std::erase_if(connections, [](const Connection& c) { return c.fd < 0; });
  }
  for (const Connection& connection : connections)
    ::close(connection.fd);
}

}  // namespace rlcheck::testing
