#pragma once
// A Redis command in RESP, written into a buffer that is reused from command to command, so
// the hot path formats without allocating (hiredis' own argv formatting builds a fresh sds
// string per command).

#include <string>
#include <string_view>

namespace rlcheck::redis {

class CommandBuffer {
 public:
  // Starts a command of `argc` arguments, discarding the previous one.
  void begin(size_t argc);
  // Starts another command of `argc` arguments after the ones already in the buffer (several
  // commands sent together: MULTI ... EXEC, ASKING + the command).
  void then(size_t argc);
  void clear() { buffer_.clear(); }
  // Appends commands already in RESP.
  void append_raw(std::string_view commands) { buffer_.append(commands); }
  bool empty() const { return buffer_.empty(); }
  void add(std::string_view arg);
  // The commands so far: "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".
  std::string_view text() const { return buffer_; }

 private:
  std::string buffer_;
};

}  // namespace rlcheck::redis
