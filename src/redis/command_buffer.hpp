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
  size_t size() const { return buffer_.size(); }
  void add(std::string_view arg);
  // The commands so far: "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".
  std::string_view text() const { return buffer_; }

 private:
  std::string buffer_;
};

// The start of an EVALSHA or EVAL in RESP, up to and with the key count: what a script's
// requests repeat, written once.
struct EvalHead {
  std::string text;     // "*argc", the verb, the sha (or source), the key count
  size_t count_at = 0;  // where the key count starts in `text`
  size_t argc = 0;      // arguments of the whole command
};
EvalHead eval_head(std::string_view verb, std::string_view script, size_t key_count,
                   size_t arg_count);

}  // namespace rlcheck::redis
