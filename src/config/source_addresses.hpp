#pragma once
// --source-address LIST: the local addresses requests leave from, for limiters keyed by the
// client's IP. "127.0.0.1-127.0.0.8", "10.0.0.5,10.0.0.6", "::1", or a mix.

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace rlcheck::config {

// More than this many addresses is a typo (a range over a whole /8), not a test.
inline constexpr size_t k_max_source_addresses = 65'536;

// A comma list of items, each an IPv4 or IPv6 address or an inclusive IPv4 range "A-B" of two
// full addresses with A <= B. The addresses in order, as inet_ntop spells them. On error: why,
// naming the bad item.
std::expected<std::vector<std::string>, std::string> parse_source_addresses(std::string_view text);

}  // namespace rlcheck::config
