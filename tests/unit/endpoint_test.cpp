#include <doctest/doctest.h>

#include <string>

#include "redis/endpoint.hpp"

using rlcheck::redis::Endpoint;
using rlcheck::redis::parse_endpoint;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("redis://host:port") {
  auto e = parse_endpoint("redis://cache.example:6380");
  REQUIRE(e.has_value());
  CHECK(e->host == "cache.example");
  CHECK(e->port == 6380);
  CHECK(e->db == 0);
  CHECK(e->user.empty());
  CHECK(e->password.empty());
  CHECK_FALSE(e->is_unix());
  CHECK(e->display() == "redis://cache.example:6380");
}

TEST_CASE("the port defaults to 6379") {
  auto e = parse_endpoint("redis://localhost");
  REQUIRE(e.has_value());
  CHECK(e->host == "localhost");
  CHECK(e->port == 6379);
  CHECK(e->display() == "redis://localhost:6379");
}

TEST_CASE("user:pass@ sets both, and display hides the password") {
  auto e = parse_endpoint("redis://alice:s3cret@db.local:7000");
  REQUIRE(e.has_value());
  CHECK(e->user == "alice");
  CHECK(e->password == "s3cret");
  CHECK(e->host == "db.local");
  CHECK(e->port == 7000);
  const std::string shown = e->display();
  CHECK_FALSE(mentions(shown, "s3cret"));
  CHECK(shown == "redis://alice:***@db.local:7000");
}

TEST_CASE("a lone credential before @ is the password") {
  auto e = parse_endpoint("redis://hunter2@localhost");
  REQUIRE(e.has_value());
  CHECK(e->user.empty());
  CHECK(e->password == "hunter2");
  CHECK_FALSE(mentions(e->display(), "hunter2"));
  CHECK(mentions(e->display(), "***"));

  auto empty_user = parse_endpoint("redis://:hunter2@localhost:6379");
  REQUIRE(empty_user.has_value());
  CHECK(empty_user->user.empty());
  CHECK(empty_user->password == "hunter2");
}

TEST_CASE("a user without a password shows no ***") {
  auto e = parse_endpoint("redis://bob:@localhost");
  REQUIRE(e.has_value());
  CHECK(e->user == "bob");
  CHECK(e->password.empty());
  CHECK(e->display() == "redis://bob@localhost:6379");
}

TEST_CASE("credentials are percent-decoded; the last @ ends them") {
  auto e = parse_endpoint("redis://u%3Ax:p%40ss@host");
  REQUIRE(e.has_value());
  CHECK(e->user == "u:x");
  CHECK(e->password == "p@ss");
  CHECK(e->host == "host");

  auto raw_at = parse_endpoint("redis://user:p@ss@host:1234");
  REQUIRE(raw_at.has_value());
  CHECK(raw_at->password == "p@ss");
  CHECK(raw_at->host == "host");
  CHECK(raw_at->port == 1234);
}

TEST_CASE("/db selects a database") {
  auto e = parse_endpoint("redis://localhost:6379/3");
  REQUIRE(e.has_value());
  CHECK(e->db == 3);
  CHECK(e->port == 6379);
  CHECK(e->display() == "redis://localhost:6379/3");

  auto no_port = parse_endpoint("redis://localhost/5");
  REQUIRE(no_port.has_value());
  CHECK(no_port->host == "localhost");
  CHECK(no_port->db == 5);

  auto trailing_slash = parse_endpoint("redis://localhost/");
  REQUIRE(trailing_slash.has_value());
  CHECK(trailing_slash->db == 0);
}

TEST_CASE("bad database numbers are refused") {
  for (const char* url : {"redis://localhost/abc", "redis://localhost/-1", "redis://h:1/2x"}) {
    CAPTURE(url);
    auto e = parse_endpoint(url);
    REQUIRE_FALSE(e.has_value());
    CHECK(mentions(e.error(), "database"));
  }
}

TEST_CASE("IPv6 hosts in brackets") {
  auto e = parse_endpoint("redis://[::1]:6380");
  REQUIRE(e.has_value());
  CHECK(e->host == "::1");
  CHECK(e->port == 6380);
  CHECK(e->display() == "redis://[::1]:6380");

  auto default_port = parse_endpoint("redis://[fe80::2]");
  REQUIRE(default_port.has_value());
  CHECK(default_port->host == "fe80::2");
  CHECK(default_port->port == 6379);

  CHECK_FALSE(parse_endpoint("redis://[::1").has_value());
  CHECK_FALSE(parse_endpoint("redis://[::1]x").has_value());
  CHECK_FALSE(parse_endpoint("redis://[]:6379").has_value());
}

TEST_CASE("unix sockets, with and without a database") {
  auto e = parse_endpoint("unix:///var/run/redis.sock");
  REQUIRE(e.has_value());
  CHECK(e->is_unix());
  CHECK(e->socket_path == "/var/run/redis.sock");
  CHECK(e->host.empty());
  CHECK(e->db == 0);
  CHECK(e->display() == "unix:///var/run/redis.sock");

  auto with_db = parse_endpoint("unix:///tmp/r.sock?db=2");
  REQUIRE(with_db.has_value());
  CHECK(with_db->socket_path == "/tmp/r.sock");
  CHECK(with_db->db == 2);
  CHECK(with_db->display() == "unix:///tmp/r.sock?db=2");
}

TEST_CASE("unix sockets need an absolute path and a good database") {
  auto relative = parse_endpoint("unix://relative.sock");
  REQUIRE_FALSE(relative.has_value());
  CHECK(mentions(relative.error(), "absolute path"));
  CHECK_FALSE(parse_endpoint("unix://").has_value());
  CHECK_FALSE(parse_endpoint("unix:///tmp/r.sock?db=x").has_value());
  CHECK_FALSE(parse_endpoint("unix:///tmp/r.sock?db=-3").has_value());
}

TEST_CASE("rediss:// is the same URL over TLS") {
  auto e = parse_endpoint("rediss://limiter:s3cret@cache.example:6380/2");
  REQUIRE(e.has_value());
  CHECK(e->tls);
  CHECK(e->host == "cache.example");
  CHECK(e->port == 6380);
  CHECK(e->user == "limiter");
  CHECK(e->password == "s3cret");
  CHECK(e->db == 2);
  CHECK(e->display() == "rediss://limiter:***@cache.example:6380/2");
  // The URL says nothing of certificates: the command line fills tls_options.
  CHECK(e->tls_options.ca_file.empty());
  CHECK_FALSE(e->tls_options.insecure);

  auto plain = parse_endpoint("redis://cache.example:6380");
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->tls);
}

TEST_CASE("rediss:// defaults to port 6379 too, and takes IPv6 hosts") {
  auto e = parse_endpoint("rediss://localhost");
  REQUIRE(e.has_value());
  CHECK(e->port == 6379);
  CHECK(e->display() == "rediss://localhost:6379");

  auto ipv6 = parse_endpoint("rediss://[::1]:6380");
  REQUIRE(ipv6.has_value());
  CHECK(ipv6->host == "::1");
  CHECK(ipv6->display() == "rediss://[::1]:6380");
}

TEST_CASE("rediss:// URLs are checked as redis:// ones") {
  for (const char* url : {"rediss://", "rediss://localhost:0", "rediss://h/x"}) {
    CAPTURE(url);
    CHECK_FALSE(parse_endpoint(url).has_value());
  }
}

TEST_CASE("unix sockets are never TLS") {
  auto e = parse_endpoint("unix:///tmp/r.sock");
  REQUIRE(e.has_value());
  CHECK_FALSE(e->tls);
}

TEST_CASE("other schemes and bare hosts are not Redis URLs") {
  for (const char* url :
       {"localhost:6379", "http://localhost", "", "REDIS://localhost", "redisss://localhost"}) {
    CAPTURE(url);
    auto e = parse_endpoint(url);
    REQUIRE_FALSE(e.has_value());
    CHECK(mentions(e.error(), "not a Redis URL"));
  }
}

TEST_CASE("ports outside 1-65535 or not numbers are refused") {
  for (const char* url : {"redis://localhost:0", "redis://localhost:65536", "redis://localhost:-1",
                          "redis://localhost:abc", "redis://localhost:", "redis://localhost:63 79",
                          "redis://[::1]:99999"}) {
    CAPTURE(url);
    auto e = parse_endpoint(url);
    REQUIRE_FALSE(e.has_value());
    CHECK(mentions(e.error(), "port"));
  }
  auto highest = parse_endpoint("redis://localhost:65535");
  REQUIRE(highest.has_value());
  CHECK(highest->port == 65535);
}

TEST_CASE("a URL without a host is refused") {
  for (const char* url : {"redis://", "redis://:6379", "redis://user:pw@:6379", "redis:///2"}) {
    CAPTURE(url);
    auto e = parse_endpoint(url);
    REQUIRE_FALSE(e.has_value());
    CHECK(mentions(e.error(), "host"));
  }
}

TEST_CASE("display of a default Endpoint") {
  Endpoint e;
  e.host = "127.0.0.1";
  CHECK(e.display() == "redis://127.0.0.1:6379");
}
