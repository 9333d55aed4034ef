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
  // Adds an argument of at most `most` bytes that `write(char* at, size_t room)` writes straight
  // into the buffer, returning its length (npos: none that counts, and nothing is added).
  // Returns whether it added one. An argument formatted on the stack and copied in was read
  // back in 16-byte moves from the byte stores that had just written it, which the store
  // buffer cannot forward.
  template <typename Write>
  bool add_in_place(size_t most, Write write);
  // The commands so far: "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".
  std::string_view text() const { return buffer_; }

 private:
  std::string buffer_;
};

namespace detail {
// An argument of two-digit length is written after a header of that width, where it stays.
inline constexpr size_t k_guessed_header = 5;  // "$NN\r\n"
// Writes "$<length>\r\n" at `at`, the argument written at `at + k_guessed_header` moved to
// follow it when its length has one digit or more than two; returns the argument's end.
char* place_header(char* at, size_t length);
}  // namespace detail

template <typename Write>
bool CommandBuffer::add_in_place(size_t most, Write write) {
  const size_t used = buffer_.size();
  bool added = false;
  const size_t room = used + detail::k_guessed_header + most + 2 + 16;  // 16: a wider header
  buffer_.resize_and_overwrite(room, [&](char* data, size_t) {
    char* const at = data + used;
    const size_t length = write(at + detail::k_guessed_header, most);
    if (length == std::string_view::npos || length > most)
      return used;
    char* end = detail::place_header(at, length);
    *end++ = '\r';
    *end++ = '\n';
    added = true;
    return static_cast<size_t>(end - data);
  });
  return added;
}

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
