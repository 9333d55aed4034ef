#include "support/hostile_server.hpp"

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

constexpr int k_slice_ms = 20;
constexpr size_t k_max_input = 1 << 20;

bool same_command(const std::string& a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != b[i])
      return false;
  }
  return true;
}

}  // namespace

bool Peer::wait_for(short events) {
  while (!stop_) {
    pollfd one{fd_, events, 0};
    const int ready = poll(&one, 1, k_slice_ms);
    if (ready > 0)
      return true;
    if (ready < 0 && errno != EINTR)
      return false;
  }
  return false;
}

bool Peer::read_some() {
  if (!wait_for(POLLIN))
    return false;
  char chunk[16384];
  const ssize_t got = recv(fd_, chunk, sizeof chunk, 0);
  if (got <= 0)
    return false;
  if (in_.size() < k_max_input)
    in_.append(chunk, static_cast<size_t>(got));
  return true;
}

bool Peer::read_until(std::string_view delimiter) {
  while (in_.find(delimiter) == std::string::npos) {
    if (!read_some())
      return false;
  }
  return true;
}

bool Peer::write(std::string_view bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    if (!wait_for(POLLOUT))
      return false;
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return false;
    if (n > 0)
      sent += static_cast<size_t>(n);
  }
  return true;
}

void Peer::stall() {
  while (read_some())
    in_.clear();
}

HostileServer::HostileServer(Handler handler) : handler_(std::move(handler)) {
  listener_ = listen_on_loopback("hostile server", true);
  acceptor_ = std::thread([this] { accept_loop(); });
}

HostileServer::~HostileServer() {
  stop_ = true;
  [[maybe_unused]] const ssize_t n = ::write(listener_.wake_pipe[1], "x", 1);
  acceptor_.join();
  for (std::thread& connection : connections_)
    connection.join();
  for (const int fd : fds_)
    close(fd);
  close(listener_.fd);
  close(listener_.wake_pipe[0]);
  close(listener_.wake_pipe[1]);
}

std::string HostileServer::http_url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(listener_.port) + path;
}

std::string HostileServer::redis_url() const {
  return "redis://127.0.0.1:" + std::to_string(listener_.port);
}

void HostileServer::accept_loop() {
  while (!stop_) {
    pollfd fds[2] = {{listener_.wake_pipe[0], POLLIN, 0}, {listener_.fd, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR)
      return;
    if (fds[0].revents != 0)
      return;
    const int fd = accept4(listener_.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    std::lock_guard lock(mutex_);
    fds_.push_back(fd);
    connections_.emplace_back([this, fd] {
      Peer peer(fd, stop_);
      handler_(peer);
      shutdown(fd, SHUT_RDWR);  // closed by the destructor, so that no fd is reused early
    });
  }
}

std::optional<std::vector<std::string>> next_command(Peer& peer) {
  std::string& in = peer.buffer();
  for (;;) {
    // *N\r\n then N times $len\r\narg\r\n; parsed again from the start until whole.
    size_t at = 0;
    auto line = [&]() -> std::optional<std::string> {
      const size_t end = in.find("\r\n", at);
      if (end == std::string::npos)
        return std::nullopt;
      std::string text = in.substr(at, end - at);
      at = end + 2;
      return text;
    };
    std::vector<std::string> command;
    bool whole = false;
    if (auto header = line(); header && header->starts_with("*")) {
      const long count = std::stol(header->substr(1));
      whole = true;
      for (long i = 0; i < count && whole; ++i) {
        auto size = line();
        if (!size) {
          whole = false;
          break;
        }
        const size_t length = std::stoul(size->substr(1));
        if (in.size() < at + length + 2) {
          whole = false;
          break;
        }
        command.push_back(in.substr(at, length));
        at += length + 2;
      }
    }
    if (whole) {
      in.erase(0, at);
      return command;
    }
    if (!peer.read_some())
      return std::nullopt;
  }
}

namespace {

std::string ordinary_reply(const std::vector<std::string>& command, long long& counter) {
  const std::string& name = command.front();
  if (same_command(name, "PING"))
    return "+PONG\r\n";
  if (same_command(name, "CLUSTER"))
    return "-ERR This instance has cluster support disabled\r\n";
  if (same_command(name, "SCRIPT"))
    return "$40\r\n0123456789abcdef0123456789abcdef01234567\r\n";
  if (same_command(name, "INCR"))
    return ":" + std::to_string(++counter) + "\r\n";
  if (same_command(name, "PEXPIRE") || same_command(name, "EXPIRE"))
    return ":1\r\n";
  if (same_command(name, "PTTL"))
    return ":-2\r\n";
  if (same_command(name, "DEL"))
    return ":0\r\n";
  if (same_command(name, "GET"))
    return "$-1\r\n";
  if (same_command(name, "EVALSHA") || same_command(name, "EVAL"))
    return "*3\r\n:1\r\n:9\r\n:0\r\n";  // allowed, 9 remaining, no wait
  return "+OK\r\n";
}

// Writes `hostility`'s answer; false: stop serving this connection.
bool hostile_reply(Peer& peer, RedisHostility hostility, const std::string& ordinary) {
  switch (hostility) {
    case RedisHostility::garbage:
      peer.write("HTTP/1.1 400 Bad Request\r\n\x01\x02\xff garbage\r\n");
      peer.stall();
      return false;
    case RedisHostility::huge_bulk_trickle: {
      if (!peer.write("$536870912\r\n"))
        return false;
      const std::string chunk(64 * 1024, 'x');
      while (peer.write(chunk)) {
      }
      return false;
    }
    case RedisHostility::huge_bulk_stall:
      peer.write("$536870912\r\nxxxx");
      peer.stall();
      return false;
    case RedisHostility::wide_array: {
      if (!peer.write("*2147483647\r\n"))
        return false;
      std::string integers;
      for (int i = 0; i < 4096; ++i)
        integers += ":1\r\n";
      while (peer.write(integers)) {
      }
      return false;
    }
    case RedisHostility::deep_nesting: {
      std::string nested;
      for (int i = 0; i < 10000; ++i)
        nested += "*1\r\n";
      peer.write(nested + ":1\r\n");
      peer.stall();
      return false;
    }
    case RedisHostility::unsolicited:
      return peer.write(ordinary + ":7\r\n+OK\r\n$3\r\nabc\r\n");
    case RedisHostility::absurd_value:
      if (ordinary.starts_with(":"))
        return peer.write(":-9223372036854775808\r\n");
      return peer.write("*3\r\n:0\r\n:-9223372036854775808\r\n:9223372036854775807\r\n");
  }
  return false;
}

}  // namespace

HostileServer::Handler fake_redis(RedisHostility hostility, std::string trigger) {
  return [hostility, trigger = std::move(trigger)](Peer& peer) {
    long long counter = 0;
    while (auto command = next_command(peer)) {
      if (command->empty())
        continue;
      const std::string ordinary = ordinary_reply(*command, counter);
      if (same_command(command->front(), trigger)) {
        if (!hostile_reply(peer, hostility, ordinary))
          return;
        continue;
      }
      if (!peer.write(ordinary))
        return;
    }
  };
}

}  // namespace rlcheck::testing
