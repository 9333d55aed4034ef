#pragma once
// Small text rules shared by the HTTP field parsers (RFC 9110 section 5.6).

#include <string>
#include <string_view>

namespace rlcheck::http {

constexpr bool is_ows(char c) {
  return c == ' ' || c == '\t';
}
constexpr bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

constexpr char to_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Without the optional whitespace around a field value.
std::string_view trim_ows(std::string_view text);
// Field names compare case-insensitively (ASCII only).
bool iequals(std::string_view a, std::string_view b);
// A header value quoted in a report line: at most 64 characters, and no control bytes that
// could forge a line.
std::string quoted(std::string_view text);

}  // namespace rlcheck::http
