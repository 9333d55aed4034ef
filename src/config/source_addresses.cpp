#include "config/source_addresses.hpp"

#include <arpa/inet.h>

#include <cstdint>
#include <optional>

#include <fmt/format.h>

namespace rlcheck::config {
namespace {

std::optional<uint32_t> ipv4(const std::string& text) {
  in_addr address{};
  if (inet_pton(AF_INET, text.c_str(), &address) != 1)
    return std::nullopt;
  return ntohl(address.s_addr);
}

std::string ipv4_text(uint32_t host_order) {
  in_addr address{};
  address.s_addr = htonl(host_order);
  char buffer[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address, buffer, sizeof buffer);
  return buffer;
}

// One address, spelled as inet_ntop does ("::0001" becomes "::1"); nullopt if it is none.
std::optional<std::string> single_address(const std::string& text) {
  if (auto v4 = ipv4(text))
    return ipv4_text(*v4);
  in6_addr address{};
  if (inet_pton(AF_INET6, text.c_str(), &address) != 1)
    return std::nullopt;
  char buffer[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, &address, buffer, sizeof buffer);
  return std::string(buffer);
}

std::expected<void, std::string> append_item(const std::string& item,
                                             std::vector<std::string>& addresses) {
  const size_t dash = item.find('-');
  if (dash == std::string::npos) {
    auto address = single_address(item);
    if (!address) {
      return std::unexpected(
          fmt::format("'{}' is not an IPv4 or IPv6 address (or an IPv4 range A-B)", item));
    }
    if (addresses.size() >= k_max_source_addresses)
      return std::unexpected(fmt::format("more than {} addresses", k_max_source_addresses));
    addresses.push_back(std::move(*address));
    return {};
  }
  const auto first = ipv4(item.substr(0, dash));
  const auto last = ipv4(item.substr(dash + 1));
  if (!first || !last) {
    return std::unexpected(
        fmt::format("'{}': a range is two full IPv4 addresses, as 127.0.0.1-127.0.0.8", item));
  }
  if (*first > *last)
    return std::unexpected(fmt::format("'{}': the range ends before it starts", item));
  if (uint64_t{*last} - *first + 1 + addresses.size() > k_max_source_addresses)
    return std::unexpected(
        fmt::format("'{}': more than {} addresses", item, k_max_source_addresses));
  for (uint64_t address = *first; address <= *last; ++address)
    addresses.push_back(ipv4_text(static_cast<uint32_t>(address)));
  return {};
}

}  // namespace

std::expected<std::vector<std::string>, std::string> parse_source_addresses(std::string_view text) {
  std::vector<std::string> addresses;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos)
      comma = text.size();
    const std::string item(text.substr(start, comma - start));
    if (item.empty())
      return std::unexpected("empty item in the list");
    if (auto appended = append_item(item, addresses); !appended)
      return std::unexpected(appended.error());
    start = comma + 1;
  }
  return addresses;
}

}  // namespace rlcheck::config
