#pragma once
// A loopback TCP server on 127.0.0.1 and a free port whose every connection runs a scripted
// handler on a thread of its own, for what a well-behaved server never does: garbage, replies
// that never end or stall, oversized headers, invalid RESP, replies to nothing. Handlers read
// and write through a Peer that gives up as soon as the server stops, so the destructor can
// join them all. `fake_redis` is a handler that answers rlcheck's set-up like a Redis and
// turns hostile on one command.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/loopback_listener.hpp"

namespace rlcheck::testing {

class Peer {
 public:
  Peer(int fd, const std::atomic<bool>& stop) : fd_(fd), stop_(stop) {}

  // Reads until `delimiter` is in buffer(); false: the peer closed, or the server stops.
  bool read_until(std::string_view delimiter);
  // Reads what comes next into buffer(); false as read_until.
  bool read_some();
  std::string& buffer() { return in_; }
  // Writes all of `bytes`; false: the peer is gone, or the server stops.
  bool write(std::string_view bytes);
  // Holds the connection open, reading and dropping what comes, until the peer closes or the
  // server stops.
  void stall();
  bool stopping() const { return stop_.load(); }

 private:
  // Waits for `events` on the socket in short slices; false when the server stops.
  bool wait_for(short events);

  int fd_;
  const std::atomic<bool>& stop_;
  std::string in_;
};

class HostileServer {
 public:
  using Handler = std::function<void(Peer&)>;

  explicit HostileServer(Handler handler);
  ~HostileServer();
  HostileServer(const HostileServer&) = delete;
  HostileServer& operator=(const HostileServer&) = delete;

  int port() const { return listener_.port; }
  std::string http_url(const std::string& path = "/") const;
  std::string redis_url() const;

 private:
  void accept_loop();

  Handler handler_;
  LoopbackListener listener_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::thread> connections_;
  std::vector<int> fds_;
  std::thread acceptor_;
};

// What the fake Redis does when its trigger command comes.
enum class RedisHostility {
  garbage,            // bytes that are not RESP
  huge_bulk_trickle,  // $536870912, then data 64 KiB at a time, without end
  huge_bulk_stall,    // $536870912, a few bytes, then nothing
  wide_array,         // *2147483647, then integers without end
  deep_nesting,       // *1 repeated 10 000 times
  unsolicited,        // the right reply, followed by replies to nothing
  absurd_value,  // the right type, absurd values: INCR -2^63; EVALSHA a denial, retry 2^63-1 ms
};

// A fake Redis: PING, CLUSTER SLOTS (cluster support disabled), SCRIPT LOAD, INCR, PEXPIRE,
// PTTL, DEL... answered as a standalone Redis would, until the first `trigger` command (e.g.
// "PING": the login, "INCR": the first request of a run), answered as `hostility` says.
HostileServer::Handler fake_redis(RedisHostility hostility, std::string trigger);

// The next RESP command in `peer`'s input (an array of bulk strings), reading as needed;
// nullopt when the peer closed or the server stops.
std::optional<std::vector<std::string>> next_command(Peer& peer);

}  // namespace rlcheck::testing
