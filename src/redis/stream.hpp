#pragma once
// The bytes under a Redis connection: a non-blocking socket, plain or TLS. Reads and writes
// never block; they say what the socket must become (readable, writable) before trying again.

#include <cstddef>
#include <expected>
#include <memory>
#include <string>

#include "redis/endpoint.hpp"

namespace rlcheck::redis {

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

// Starts a non-blocking connect to the endpoint's host and port (or unix socket). The socket
// is connected once writable and `connect_error(fd)` is empty. On error: why, in words.
std::expected<int, std::string> start_connect(const Endpoint& endpoint);
// Empty once the connect started by start_connect succeeded; else the reason.
std::string connect_error(int fd);

}  // namespace rlcheck::redis
