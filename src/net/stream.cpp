#include "net/stream.hpp"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

namespace rlcheck::net {
namespace {

class PlainStream final : public Stream {
 public:
  explicit PlainStream(int fd) : fd_(fd) {}
  ~PlainStream() override { ::close(fd_); }
  PlainStream(const PlainStream&) = delete;
  PlainStream& operator=(const PlainStream&) = delete;

  int fd() const override { return fd_; }
  IoResult handshake() override { return {}; }

  IoResult read(char* buffer, size_t size) override {
    const ssize_t n = ::recv(fd_, buffer, size, 0);
    if (n > 0)
      return {IoStatus::done, static_cast<size_t>(n)};
    if (n == 0)
      return {IoStatus::closed, 0};
    return failure(IoStatus::want_read);
  }

  IoResult write(const char* data, size_t size) override {
    const ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
    if (n >= 0)
      return {IoStatus::done, static_cast<size_t>(n)};
    return failure(IoStatus::want_write);
  }

  bool has_buffered() const override { return false; }
  std::string error() const override { return error_; }

 private:
  IoResult failure(IoStatus would) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
      return {would, 0};
    error_ = std::strerror(errno);
    return {errno == ECONNRESET || errno == EPIPE ? IoStatus::closed : IoStatus::failed, 0};
  }

  int fd_;
  std::string error_;
};

bool make_non_blocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 &&
         fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
}

std::expected<int, std::string> connect_unix(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path)
    return std::unexpected(fmt::format("socket path too long: {}", path));
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || !make_non_blocking(fd)) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    return std::unexpected(reason);
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 &&
      errno != EINPROGRESS && errno != EAGAIN) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    return std::unexpected(reason);
  }
  return fd;
}

}  // namespace

std::unique_ptr<Stream> plain_stream(int fd) {
  return std::make_unique<PlainStream>(fd);
}

int address_family(const std::string& address) {
  in6_addr scratch{};
  if (inet_pton(AF_INET, address.c_str(), &scratch) == 1)
    return AF_INET;
  if (inet_pton(AF_INET6, address.c_str(), &scratch) == 1)
    return AF_INET6;
  return 0;
}

std::expected<void, std::string> bind_source(int fd, int family, const std::string& address) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    v4->sin_family = AF_INET;
    length = sizeof *v4;
    if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) != 1)
      return std::unexpected(fmt::format("{} is not an IPv4 address", address));
  } else if (family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    v6->sin6_family = AF_INET6;
    length = sizeof *v6;
    if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) != 1)
      return std::unexpected(fmt::format("{} is not an IPv6 address", address));
  } else {
    return std::unexpected(fmt::format("cannot bind {}: not an IP socket", address));
  }
#ifdef IP_BIND_ADDRESS_NO_PORT
  const int on = 1;
  setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof on);
#endif
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&storage), length) != 0)
    return std::unexpected(fmt::format("cannot bind {}: {}", address, std::strerror(errno)));
  return {};
}

std::expected<void, std::string> check_bindable(const std::string& address) {
  const int family = address_family(address);
  if (family == 0)
    return std::unexpected(fmt::format("{} is not an IP address", address));
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return std::unexpected(fmt::format("cannot bind {}: {}", address, std::strerror(errno)));
  auto bound = bind_source(fd, family, address);
  ::close(fd);
  return bound;
}

std::expected<int, std::string> start_connect(const std::string& host, int port,
                                              const std::string& socket_path,
                                              const std::string& source_address) {
  if (!socket_path.empty())
    return connect_unix(socket_path);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int status = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); status != 0) {
    return std::unexpected(fmt::format("cannot resolve {}: {}", host, gai_strerror(status)));
  }
  std::string reason = "no address";
  for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
    const int fd = ::socket(address->ai_family, address->ai_socktype, address->ai_protocol);
    if (fd < 0 || !make_non_blocking(fd)) {
      reason = std::strerror(errno);
      if (fd >= 0)
        ::close(fd);
      continue;
    }
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (!source_address.empty()) {
      if (auto bound = bind_source(fd, address->ai_family, source_address); !bound) {
        reason = bound.error();
        ::close(fd);
        continue;
      }
    }
    if (::connect(fd, address->ai_addr, address->ai_addrlen) == 0 || errno == EINPROGRESS) {
      freeaddrinfo(found);
      return fd;
    }
    reason = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  return std::unexpected(reason);
}

std::string connect_error(int fd) {
  int error = 0;
  socklen_t length = sizeof error;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
    return std::strerror(errno);
  return error == 0 ? std::string() : std::string(std::strerror(error));
}

}  // namespace rlcheck::net
