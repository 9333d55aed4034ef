// --tls-ca, --tls-cert, --tls-key, --tls-sni and --insecure: where they apply and what they
// refuse (cli/tls_options.cpp, through the whole command line).

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "base/exit_code.hpp"
#include "cli/command_line.hpp"
#include "command_line_support.hpp"

using rlcheck::base::ExitCode;
using rlcheck::base::FatalError;
using rlcheck::config::Config;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;

namespace {

Config parse(std::vector<const char*> args) {
  return parse_arguments(std::move(args)).config;
}

// Certificate-shaped files (the command line only checks that they can be read).
struct TempPems {
  std::filesystem::path dir;
  std::string ca, cert, key;
  TempPems() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "rlcheck-tls-unit-XXXXXX").string();
    dir = mkdtemp(pattern.data());
    ca = (dir / "ca.pem").string();
    cert = (dir / "client.pem").string();
    key = (dir / "client.key").string();
    for (const std::string& path : {ca, cert, key})
      std::ofstream(path) << "-----BEGIN CERTIFICATE-----\n";
  }
  ~TempPems() { std::filesystem::remove_all(dir); }
};

// $REDIS_URL as a test needs it, restored after.
struct RedisUrlEnv {
  std::optional<std::string> saved;
  explicit RedisUrlEnv(const char* value) {
    if (const char* old = std::getenv("REDIS_URL"))
      saved = old;
    if (value != nullptr)
      setenv("REDIS_URL", value, 1);
    else
      unsetenv("REDIS_URL");
  }
  ~RedisUrlEnv() {
    if (saved)
      setenv("REDIS_URL", saved->c_str(), 1);
    else
      unsetenv("REDIS_URL");
  }
};

}  // namespace

TEST_CASE("no TLS flag: an empty TlsConfig") {
  RedisUrlEnv env(nullptr);
  const Config c = parse({"redis"});
  CHECK(c.tls.ca_file.empty());
  CHECK(c.tls.cert_file.empty());
  CHECK(c.tls.key_file.empty());
  CHECK(c.tls.sni.empty());
  CHECK_FALSE(c.tls.insecure);
}

TEST_CASE("TLS flags reach the config for a rediss:// Redis, on every Redis command") {
  TempPems pems;
  for (const char* command : {"redis", "compare", "serve", "probe"}) {
    CAPTURE(command);
    const Config c = parse({command, "--redis", "rediss://cache.example:6380", "--tls-ca",
                            pems.ca.c_str(), "--tls-cert", pems.cert.c_str(), "--tls-key",
                            pems.key.c_str(), "--tls-sni", "cache.internal", "--insecure"});
    CHECK(c.tls.ca_file == pems.ca);
    CHECK(c.tls.cert_file == pems.cert);
    CHECK(c.tls.key_file == pems.key);
    CHECK(c.tls.sni == "cache.internal");
    CHECK(c.tls.insecure);
  }
}

TEST_CASE("a rediss:// $REDIS_URL takes TLS flags when --redis is absent") {
  TempPems pems;
  RedisUrlEnv env("rediss://cache.example:6380");
  CHECK(parse({"redis", "--tls-ca", pems.ca.c_str()}).tls.ca_file == pems.ca);
  RedisUrlEnv plain("redis://ops:s3cret@cache.example:6379");
  const std::string refused = usage_error({"redis", "--insecure"});
  CHECK(mentions(refused, "--insecure"));
  CHECK(mentions(refused, "REDIS_URL"));
  CHECK(mentions(refused, "is not TLS"));
  CHECK_FALSE(mentions(refused, "s3cret"));
}

TEST_CASE("TLS flags with a Redis that is not TLS are refused, saying so") {
  TempPems pems;
  RedisUrlEnv env(nullptr);
  const std::string plain = usage_error(
      {"redis", "--redis", "redis://ops:s3cret@127.0.0.1:6379", "--tls-ca", pems.ca.c_str()});
  CHECK(mentions(plain, "--tls-ca"));
  CHECK(mentions(plain, "redis://ops:***@127.0.0.1:6379 is not TLS"));
  CHECK_FALSE(mentions(plain, "s3cret"));

  const std::string unix_socket =
      usage_error({"serve", "--redis", "unix:///tmp/r.sock", "--insecure"});
  CHECK(mentions(unix_socket, "--insecure"));
  CHECK(mentions(unix_socket, "not TLS"));

  const std::string none = usage_error({"redis", "--tls-sni", "cache"});
  CHECK(mentions(none, "--tls-sni"));
  CHECK(mentions(none, "rediss://"));

  const std::string cluster = usage_error({"redis", "--embedded-cluster", "3", "--insecure"});
  CHECK(mentions(cluster, "--insecure"));
  CHECK(mentions(cluster, "--embedded-cluster"));
}

TEST_CASE("a client certificate needs its key and the key its certificate") {
  TempPems pems;
  CHECK(mentions(usage_error({"redis", "--redis", "rediss://h", "--tls-cert", pems.cert.c_str()}),
                 "--tls-cert: needs --tls-key"));
  CHECK(mentions(usage_error({"redis", "--redis", "rediss://h", "--tls-key", pems.key.c_str()}),
                 "--tls-key: needs --tls-cert"));
}

TEST_CASE("certificate files must exist and be files") {
  TempPems pems;
  const std::string missing =
      usage_error({"redis", "--redis", "rediss://h", "--tls-ca", "/no/such/ca.pem"});
  CHECK(mentions(missing, "--tls-ca: no such file: /no/such/ca.pem"));
  const std::string folder = pems.dir.string();
  CHECK(mentions(usage_error({"redis", "--redis", "rediss://h", "--tls-cert", pems.cert.c_str(),
                              "--tls-key", folder.c_str()}),
                 "--tls-key: not a file"));
  CHECK(mentions(usage_error({"redis", "--redis", "rediss://h", "--tls-cert", "/no/cert.pem",
                              "--tls-key", pems.key.c_str()}),
                 "--tls-cert"));
  CHECK(mentions(usage_error({"redis", "--redis", "rediss://h", "--tls-sni", ""}), "--tls-sni"));
}

TEST_CASE("for HTTP, TLS flags apply to https:// endpoints; --tls-sni is refused") {
  TempPems pems;
  const Config http =
      parse({"http", "https://api.example/", "--tls-ca", pems.ca.c_str(), "--tls-cert",
             pems.cert.c_str(), "--tls-key", pems.key.c_str(), "--insecure"});
  CHECK(http.tls.ca_file == pems.ca);
  CHECK(http.tls.cert_file == pems.cert);
  CHECK(http.tls.key_file == pems.key);
  CHECK(http.tls.insecure);

  // compare: one https:// endpoint among several is enough.
  const Config compare =
      parse({"compare", "--url", "http://a/?k={run}", "--url", "https://b/?k={run}", "--insecure"});
  CHECK(compare.tls.insecure);

  const std::string plain = usage_error({"http", "http://api.example/", "--insecure"});
  CHECK(mentions(plain, "--insecure: http://api.example/ is not TLS"));
  CHECK(mentions(usage_error({"compare", "--url", "http://a/?k={run}", "--url", "http://b/?k={run}",
                              "--tls-ca", pems.ca.c_str()}),
                 "--tls-ca: none of the --url endpoints is TLS"));
  const std::string sni = usage_error({"http", "https://api.example/", "--tls-sni", "x"});
  CHECK(mentions(sni, "--tls-sni"));
  CHECK(mentions(sni, "HTTP"));
  CHECK(mentions(usage_error({"probe", "https://api.example/?k={run}", "--tls-sni", "x"}),
                 "--tls-sni"));
}
