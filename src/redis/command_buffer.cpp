#include "redis/command_buffer.hpp"

#include <charconv>

namespace rlcheck::redis {

void CommandBuffer::begin(size_t argc) {
  buffer_.clear();
  buffer_.push_back('*');
  append_number(argc);
}

void CommandBuffer::then(size_t argc) {
  buffer_.push_back('*');
  append_number(argc);
}

void CommandBuffer::add(std::string_view arg) {
  buffer_.push_back('$');
  append_number(arg.size());
  buffer_.append(arg);
  buffer_.append("\r\n");
}

void CommandBuffer::append_number(size_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  buffer_.append(digits, end);
  buffer_.append("\r\n");
}

}  // namespace rlcheck::redis
