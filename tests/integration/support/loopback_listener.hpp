#pragma once
// A listening TCP socket on 127.0.0.1 at a port the kernel picks, and the pipe its server's
// thread is woken through to stop: what every small test server starts from.

namespace rlcheck::testing {

struct LoopbackListener {
  int fd = -1;
  int port = 0;
  int wake_pipe[2] = {-1, -1};  // [0] polled by the server, [1] written to stop it
};

// Throws std::runtime_error naming `server` when it cannot listen. `nonblocking` applies to the
// listening socket and the pipe.
LoopbackListener listen_on_loopback(const char* server, bool nonblocking);

}  // namespace rlcheck::testing
