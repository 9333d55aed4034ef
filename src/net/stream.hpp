#pragma once
// The bytes under a connection (Redis, or the native HTTP client): a non-blocking socket, plain
// or TLS. Reads and writes never block; they say what the socket must become (readable,
// writable) before trying again.

#include <cstddef>
#include <expected>
#include <memory>
#include <string>

namespace rlcheck::net {

enum class IoStatus {
  done,        // bytes moved (or the handshake finished)
  want_read,   // try again when the socket is readable
  want_write,  // try again when the socket is writable
  closed,      // the peer closed the connection
  failed,      // see Stream::error()
};

struct IoResult {
  IoStatus status = IoStatus::done;
  size_t bytes = 0;
};

class Stream {
 public:
  virtual ~Stream() = default;
  virtual int fd() const = 0;
  // Plain streams are ready at once; TLS drives its handshake (and verifies the server).
  virtual IoResult handshake() = 0;
  virtual IoResult read(char* buffer, size_t size) = 0;
  virtual IoResult write(const char* data, size_t size) = 0;
  // Whether bytes already received wait inside the stream (TLS records): read again before
  // waiting for the socket.
  virtual bool has_buffered() const = 0;
  // Why the last operation failed, in words ("certificate verify failed: ...").
  virtual std::string error() const = 0;
};

// A plain stream over a connected socket, which it owns.
std::unique_ptr<Stream> plain_stream(int fd);

// Starts a non-blocking connect to `host` and `port` (or the unix socket `socket_path`, when
// not empty). The socket
// is connected once writable and `connect_error(fd)` is empty. A `source_address` (an IPv4 or
// IPv6 address; empty: the system's choice) is bound first, port 0, so the connection leaves
// from it; a unix socket ignores it. On error: why, in words.
std::expected<int, std::string> start_connect(const std::string& host, int port,
                                              const std::string& socket_path,
                                              const std::string& source_address = {});
// Binds a socket not yet connected to `address`, port 0 (the port is picked at connect, so
// that many connections from one address do not run out of ports). On error: why, naming the
// address ("cannot bind 192.0.2.1: Cannot assign requested address").
std::expected<void, std::string> bind_source(int fd, int family, const std::string& address);
// The address family (AF_INET, AF_INET6) of an address; 0 if it is none.
int address_family(const std::string& address);
// Whether this host can send from `address`: a socket bound to it and closed. On error: why,
// as bind_source says it.
std::expected<void, std::string> check_bindable(const std::string& address);
// Empty once the connect started by start_connect succeeded; else the reason.
std::string connect_error(int fd);

}  // namespace rlcheck::net
