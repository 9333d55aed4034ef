#pragma once
// Where a server of rlcheck's listens, as the command line spells it: "127.0.0.1:9464",
// "[::1]:9464", "localhost:9464", ":9464" (every address of the machine); port 0 lets the
// system choose one.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace rlcheck::config {

struct ListenAddress {
  std::string host;  // an IPv4 or IPv6 address (without brackets) or a host name; empty: any
  uint16_t port = 0;
  bool operator==(const ListenAddress&) const = default;
};

// "HOST:PORT" or "[IPV6]:PORT", the port a whole number from 0 to 65535. On error, says what is
// wrong in words that follow the flag name.
std::expected<ListenAddress, std::string> parse_listen_address(std::string_view text);

// The address as it parses again: "127.0.0.1:9464", "[::1]:0", ":9464".
std::string format_listen_address(const ListenAddress& address);

}  // namespace rlcheck::config
