#include "redis/script_time.hpp"

#include <cctype>
#include <cstddef>

namespace rlcheck::redis {
namespace {

bool is_time(std::string_view text) {
  if (text.size() != 4)
    return false;
  constexpr std::string_view k_time = "TIME";
  for (size_t i = 0; i < 4; ++i) {
    if (std::toupper(static_cast<unsigned char>(text[i])) != k_time[i])
      return false;
  }
  return true;
}

// At `at`, a long bracket opens ([[, [=[, [==[ ...): its level (the number of '='), else -1.
int long_bracket_level(std::string_view lua, size_t at) {
  if (at >= lua.size() || lua[at] != '[')
    return -1;
  size_t i = at + 1;
  while (i < lua.size() && lua[i] == '=')
    ++i;
  return i < lua.size() && lua[i] == '[' ? static_cast<int>(i - at - 1) : -1;
}

class Scanner {
 public:
  explicit Scanner(std::string_view lua) : lua_(lua) {}

  std::optional<int> find() {
    while (at_ < lua_.size()) {
      const char c = lua_[at_];
      if (c == '-' && peek(1) == '-') {
        at_ += 2;
        if (const int level = long_bracket_level(lua_, at_); level >= 0)
          long_text(level);
        else
          line_comment();
      } else if (c == '\'' || c == '"') {
        const int line = line_;
        if (is_time(quoted(c)))
          return line;
      } else if (const int level = long_bracket_level(lua_, at_); level >= 0) {
        const int line = line_;
        if (is_time(long_text(level)))
          return line;
      } else {
        advance();
      }
    }
    return std::nullopt;
  }

 private:
  char peek(size_t ahead) const { return at_ + ahead < lua_.size() ? lua_[at_ + ahead] : '\0'; }

  void advance() {
    if (lua_[at_] == '\n')
      ++line_;
    ++at_;
  }

  void line_comment() {
    while (at_ < lua_.size() && lua_[at_] != '\n')
      ++at_;
  }

  // A quoted string from its opening quote; returns its raw text (escapes kept: TIME has none).
  std::string_view quoted(char quote) {
    ++at_;
    const size_t begin = at_;
    while (at_ < lua_.size() && lua_[at_] != quote && lua_[at_] != '\n') {
      if (lua_[at_] == '\\' && at_ + 1 < lua_.size())
        advance();
      advance();
    }
    const std::string_view text = lua_.substr(begin, at_ - begin);
    if (at_ < lua_.size())
      advance();
    return text;
  }

  // A long bracket's text from its opening '[' (a comment's or a string's).
  std::string_view long_text(int level) {
    at_ += static_cast<size_t>(level) + 2;
    const size_t begin = at_;
    while (at_ < lua_.size()) {
      if (lua_[at_] == ']') {
        size_t i = at_ + 1;
        while (i < lua_.size() && lua_[i] == '=')
          ++i;
        if (i < lua_.size() && lua_[i] == ']' && static_cast<int>(i - at_ - 1) == level) {
          const std::string_view text = lua_.substr(begin, at_ - begin);
          at_ = i + 1;
          return text;
        }
      }
      advance();
    }
    return lua_.substr(begin);
  }

  std::string_view lua_;
  size_t at_ = 0;
  int line_ = 1;
};

}  // namespace

std::optional<int> line_calling_time(std::string_view lua) {
  return Scanner(lua).find();
}

}  // namespace rlcheck::redis
