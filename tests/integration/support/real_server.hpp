#pragma once
// Real servers (nginx, haproxy, a Flask application) as children of the test: each runs from a
// scratch directory of its own with a config written there, listens on a free loopback port,
// is ready once a connect to that port succeeds, and is stopped (its whole process group,
// workers included) and its directory removed when the object goes, even when a CHECK failed.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace rlcheck::testing {

// A directory under /tmp, removed with everything in it when the object goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `text` to path()/name (creating folders on the way) and returns the file's path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

// A port on 127.0.0.1 that nothing listens on now (the kernel's pick for port 0).
int free_loopback_port();
// Something on 127.0.0.1:`port` accepts a TCP connection now.
bool accepts_connections(int port);

// The first of `candidates` (absolute paths) that is an executable file, else `name` on PATH.
std::optional<std::string> find_program(const std::string& name,
                                        const std::vector<std::string>& candidates);

class RealServer {
 public:
  // Runs `argv` (argv[0] a path) in `cwd`, stdout and stderr to `log_file`, in a process group
  // of its own. Throws std::runtime_error with the log's text when the server exits, or does
  // not accept a connection on 127.0.0.1:`port` within `limit`.
  RealServer(const std::vector<std::string>& argv, const std::string& cwd,
             const std::string& log_file, int port,
             std::chrono::milliseconds limit = std::chrono::seconds(15));
  ~RealServer();
  RealServer(const RealServer&) = delete;
  RealServer& operator=(const RealServer&) = delete;

  int port() const { return port_; }
  // http://127.0.0.1:PORT
  std::string base_url() const;
  // What the server printed so far, for failure messages.
  std::string log() const;
  // SIGTERM to its process group, SIGKILL after `grace`; reaps it. Idempotent.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_file_;
};

}  // namespace rlcheck::testing
