#include "redis/command_buffer.hpp"

#include <charconv>
#include <cstring>

namespace rlcheck::redis {
namespace {

constexpr size_t k_most_digits = 20;  // of a size_t

// Writes "<mark><value>\r\n" at `at`; returns the end.
char* write_header(char* at, char mark, size_t value) {
  *at++ = mark;
  at = std::to_chars(at, at + k_most_digits, value).ptr;
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

}  // namespace

namespace detail {

char* place_header(char* at, size_t length) {
  if (length >= 10 && length < 100) {  // the guessed width: the argument stays where it is
    at[0] = '$';
    at[1] = static_cast<char>('0' + length / 10);
    at[2] = static_cast<char>('0' + length % 10);
    at[3] = '\r';
    at[4] = '\n';
    return at + k_guessed_header + length;
  }
  size_t digits = 1;
  for (size_t rest = length; rest >= 10; rest /= 10)
    ++digits;
  const size_t width = digits + 3;
  if (width != k_guessed_header)
    std::memmove(at + width, at + k_guessed_header, length);
  write_header(at, '$', length);
  return at + width + length;
}

}  // namespace detail

void CommandBuffer::begin(size_t argc) {
  buffer_.clear();
  then(argc);
}

void CommandBuffer::then(size_t argc) {
  const size_t used = buffer_.size();
  // Written in place: the hot path's one size check rather than one per piece.
  buffer_.resize_and_overwrite(used + k_most_digits + 3, [&](char* data, size_t) {
    return static_cast<size_t>(write_header(data + used, '*', argc) - data);
  });
}

void CommandBuffer::add(std::string_view arg) {
  const size_t used = buffer_.size();
  buffer_.resize_and_overwrite(used + k_most_digits + 5 + arg.size(), [&](char* data, size_t) {
    char* at = write_header(data + used, '$', arg.size());
    if (!arg.empty())
      std::memcpy(at, arg.data(), arg.size());
    at += arg.size();
    *at++ = '\r';
    *at++ = '\n';
    return static_cast<size_t>(at - data);
  });
}

EvalHead eval_head(std::string_view verb, std::string_view script, size_t key_count,
                   size_t arg_count) {
  EvalHead head;
  head.argc = 3 + key_count + arg_count;
  CommandBuffer text;
  text.begin(head.argc);
  text.add(verb);
  text.add(script);
  head.count_at = text.size();
  char count[k_most_digits];
  const auto end = std::to_chars(count, count + sizeof count, key_count).ptr;
  text.add(std::string_view(count, static_cast<size_t>(end - count)));
  head.text = std::string(text.text());
  return head;
}

}  // namespace rlcheck::redis
