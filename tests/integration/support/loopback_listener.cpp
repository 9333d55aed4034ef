#include "support/loopback_listener.hpp"

#include <stdexcept>
#include <string>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rlcheck::testing {

LoopbackListener listen_on_loopback(const char* server, bool nonblocking) {
  LoopbackListener listener;
  const int flags = nonblocking ? SOCK_NONBLOCK : 0;
  listener.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
  const int on = 1;
  setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (listener.fd < 0 || bind(listener.fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(listener.fd, 256) != 0 ||
      getsockname(listener.fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      pipe2(listener.wake_pipe, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) != 0) {
    if (listener.fd >= 0)
      close(listener.fd);
    throw std::runtime_error(std::string(server) + ": cannot listen on 127.0.0.1");
  }
  listener.port = ntohs(address.sin_port);
  return listener;
}

}  // namespace rlcheck::testing
