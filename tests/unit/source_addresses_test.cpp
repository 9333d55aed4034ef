#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/source_addresses.hpp"

using rlcheck::config::k_max_source_addresses;
using rlcheck::config::parse_source_addresses;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("source addresses: a range expands in order, inclusive of both ends") {
  auto parsed = parse_source_addresses("127.0.0.1-127.0.0.4");
  REQUIRE(parsed);
  CHECK(*parsed == std::vector<std::string>{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"});
}

TEST_CASE("source addresses: a range crosses an octet boundary") {
  auto parsed = parse_source_addresses("10.0.0.255-10.0.1.1");
  REQUIRE(parsed);
  CHECK(*parsed == std::vector<std::string>{"10.0.0.255", "10.0.1.0", "10.0.1.1"});
}

TEST_CASE("source addresses: a list keeps its order and mixes IPv4, IPv6 and ranges") {
  auto parsed = parse_source_addresses("10.0.0.6,::0001,10.0.0.5,192.168.1.1-192.168.1.2");
  REQUIRE(parsed);
  CHECK(*parsed ==
        std::vector<std::string>{"10.0.0.6", "::1", "10.0.0.5", "192.168.1.1", "192.168.1.2"});
}

TEST_CASE("source addresses: a one-address range is that address") {
  auto parsed = parse_source_addresses("127.0.0.9-127.0.0.9");
  REQUIRE(parsed);
  CHECK(*parsed == std::vector<std::string>{"127.0.0.9"});
}

TEST_CASE("source addresses: bad items are named") {
  struct Case {
    const char* text;
    const char* named;
  };
  const Case cases[] = {
      {"", "empty item"},
      {"127.0.0.1,", "empty item"},
      {"localhost", "'localhost'"},
      {"127.0.0.256", "'127.0.0.256'"},
      {"127.0.0", "'127.0.0'"},
      {" 127.0.0.1", "' 127.0.0.1'"},
      {"127.0.0.8-127.0.0.1", "ends before it starts"},
      {"127.0.0.1-8", "two full IPv4 addresses"},
      {"::1-::2", "two full IPv4 addresses"},
      {"127.0.0.1-", "'127.0.0.1-'"},
  };
  for (const Case& bad : cases) {
    CAPTURE(bad.text);
    auto parsed = parse_source_addresses(bad.text);
    REQUIRE_FALSE(parsed);
    CHECK(mentions(parsed.error(), bad.named));
  }
}

TEST_CASE("source addresses: the total is capped") {
  auto whole = parse_source_addresses("10.0.0.0-10.0.255.255");
  REQUIRE(whole);
  CHECK(whole->size() == k_max_source_addresses);
  auto over = parse_source_addresses("10.0.0.0-10.1.0.0");
  REQUIRE_FALSE(over);
  CHECK(mentions(over.error(), "more than 65536"));
  auto over_by_one = parse_source_addresses("10.0.0.0-10.0.255.255,10.1.0.0");
  REQUIRE_FALSE(over_by_one);
  CHECK(mentions(over_by_one.error(), "more than 65536"));
}
