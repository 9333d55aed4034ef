#pragma once
// `rlcheck serve` as a child of the test: started with stderr piped, ready once it printed its
// "listening on" line (the real port, with --listen 127.0.0.1:0), stopped with SIGTERM and
// reaped when the object goes, even when a CHECK failed.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace rlcheck::testing {

class ServeProcess {
 public:
  // Runs RLCHECK_BINARY serve `args` (which should hold --listen 127.0.0.1:0). Throws
  // std::runtime_error, with what it printed, if it exits or is not listening within `limit`.
  explicit ServeProcess(const std::vector<std::string>& args,
                        std::chrono::milliseconds limit = std::chrono::seconds(10));
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // http://127.0.0.1:PORT/ as the listening line told it.
  const std::string& url() const { return url_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  // Reads what stderr holds now (never blocks). With a non-empty `containing`, keeps reading
  // until a line containing it has been read (now or before) or `wait` has passed. Returns
  // every complete line read so far.
  const std::vector<std::string>& drain_stderr(
      const std::string& containing = {},
      std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // Reads until `count` lines containing `text` have been read, `wait` has passed, or stderr
  // closed; returns how many there are.
  int wait_for_count(const std::string& text, int count, std::chrono::milliseconds wait);
  // Lines read so far that contain `text`.
  int count_lines(const std::string& text) const;
  const std::vector<std::string>& lines() const { return lines_; }
  // Everything read so far, for failure messages.
  std::string log() const;

  // SIGTERM, then waits (stderr reaching EOF, at most `grace`; SIGKILL after) and reaps.
  // Returns the exit code (128 + signal when killed); nullopt if already stopped.
  std::optional<int> stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  // One read attempt within `wait`; false at EOF or when nothing came in time.
  bool read_some(std::chrono::milliseconds wait);

  pid_t pid_ = -1;
  int err_fd_ = -1;
  bool eof_ = false;
  std::string partial_;
  std::vector<std::string> lines_;
  std::string url_;
  int port_ = 0;
};

}  // namespace rlcheck::testing
