#include "config/listen_address.hpp"

#include <fmt/format.h>

namespace rlcheck::config {
namespace {

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

bool v6_char(char c) {
  return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' ||
         c == '.' || c == '%';
}

}  // namespace

std::expected<ListenAddress, std::string> parse_listen_address(std::string_view text) {
  const auto malformed = [&](std::string_view why) {
    return std::unexpected(fmt::format("'{}' is not HOST:PORT ({})", text, why));
  };
  ListenAddress address;
  std::string_view port;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos)
      return malformed("no ']' after the IPv6 address");
    const std::string_view host = text.substr(1, close - 1);
    if (host.empty() || host.find(':') == std::string_view::npos)
      return malformed("an IPv6 address goes in brackets");
    for (const char c : host) {
      if (!v6_char(c))
        return malformed("an IPv6 address goes in brackets");
    }
    if (close + 1 >= text.size() || text[close + 1] != ':')
      return malformed("no port");
    address.host = std::string(host);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return malformed("no port");
    const std::string_view host = text.substr(0, colon);
    if (host.find(':') != std::string_view::npos)
      return malformed("an IPv6 address goes in brackets: [::1]:9464");
    for (const char c : host) {
      if (!host_char(c))
        return malformed("the host has a character no address or name has");
    }
    address.host = std::string(host);
    port = text.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5)
    return malformed("the port is a number from 0 to 65535");
  uint32_t value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9')
      return malformed("the port is a number from 0 to 65535");
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > 65535)
    return malformed("the port is a number from 0 to 65535");
  address.port = static_cast<uint16_t>(value);
  return address;
}

std::string format_listen_address(const ListenAddress& address) {
  if (address.host.find(':') != std::string::npos)
    return fmt::format("[{}]:{}", address.host, address.port);
  return fmt::format("{}:{}", address.host, address.port);
}

}  // namespace rlcheck::config
