#include "config/listen_address.hpp"

#include <doctest/doctest.h>

using rlcheck::config::format_listen_address;
using rlcheck::config::ListenAddress;
using rlcheck::config::parse_listen_address;

TEST_CASE("listen address: host and port, IPv6 in brackets, any address, port 0") {
  CHECK(*parse_listen_address("127.0.0.1:9464") == ListenAddress{"127.0.0.1", 9464});
  CHECK(*parse_listen_address("localhost:0") == ListenAddress{"localhost", 0});
  CHECK(*parse_listen_address("[::1]:9464") == ListenAddress{"::1", 9464});
  CHECK(*parse_listen_address(":65535") == ListenAddress{"", 65535});
  CHECK(format_listen_address({"::1", 9464}) == "[::1]:9464");
  CHECK(format_listen_address({"127.0.0.1", 0}) == "127.0.0.1:0");
  CHECK(format_listen_address({"", 9464}) == ":9464");
}

TEST_CASE("listen address: malformed ones say what is wrong") {
  for (const char* text :
       {"", "9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:94x", "127.0.0.1:-1",
        "::1:9464", "[::1]", "[::1]9464", "[]:1", "[1.2.3.4]:80", "a b:80", "127.0.0.1:123456"}) {
    CAPTURE(text);
    const auto parsed = parse_listen_address(text);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().find("is not HOST:PORT") != std::string::npos);
  }
  CHECK(parse_listen_address("::1:9464").error().find("[::1]:9464") != std::string::npos);
}
