#include "http/field_text.hpp"

#include <algorithm>

namespace rlcheck::http {

std::string_view trim_ows(std::string_view text) {
  while (!text.empty() && is_ows(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && is_ows(text.back()))
    text.remove_suffix(1);
  return text;
}

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) { return to_lower(x) == to_lower(y); });
}

std::string quoted(std::string_view text) {
  constexpr size_t k_max = 64;
  std::string out = "'";
  for (char c : text.substr(0, k_max)) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte < 0x20 || byte >= 0x7f ? '?' : c);
  }
  out += text.size() > k_max ? "...'" : "'";
  return out;
}

}  // namespace rlcheck::http
