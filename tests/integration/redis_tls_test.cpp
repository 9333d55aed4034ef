// rlcheck redis over TLS (rediss://) against TLS-only redis-servers: a limiter is tested as
// exactly as in plain text, with the certificate verified against --tls-ca (or not at all with
// --insecure); a server certificate that does not verify, a name it does not carry, or a
// missing client certificate is exit 3 with the reason.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_tls.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

// The lua limiter (10 per 60 s) under 100 requests, 20 at once, in two runs, over TLS.
ProcessOutcome lua_over_tls(const TestTlsRedis& server, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"redis",   "--redis", server.url(), "--strategy", "lua",
                                "--exact", "-n",      "100",        "-p",         "20",
                                "-r",      "2",       "--timeout",  "3s",         "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunOptions options;
  options.limit = std::chrono::seconds(30);
  return run_rlcheck(args, options);
}

// The outcome passed, and every run admitted exactly the limit.
void check_exact_pass(const ProcessOutcome& outcome) {
  INFO("stderr: " << outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const json report = json::parse(outcome.out);
  CHECK(report["verdict"] == "pass");
  REQUIRE(report["runs"].size() == 2);
  for (const auto& run : report["runs"]) {
    CHECK(run["allowed"] == 10);
    CHECK(run["denied"] == 90);
    CHECK(run["errors"] == 0);
  }
  CHECK(check_status(report, "limit") == "pass");
}

// A refusal before any request: exit 3, said on stderr.
void check_refused(const ProcessOutcome& outcome, const std::string& reason) {
  CAPTURE(outcome.out);
  CAPTURE(outcome.err);
  CHECK_FALSE(outcome.timed_out);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find(reason) != std::string::npos);
}

}  // namespace

TEST_SUITE("redis over TLS") {
  TEST_CASE("the lua limiter holds its limit exactly over TLS, the server verified by --tls-ca") {
    const TestTlsRedis& server = TestTlsRedis::shared();
    check_exact_pass(lua_over_tls(server, {"--tls-ca", server.ca_file()}));
  }

  TEST_CASE("--pipeline 8 over TLS is exact too") {
    const TestTlsRedis& server = TestTlsRedis::shared();
    check_exact_pass(lua_over_tls(server, {"--tls-ca", server.ca_file(), "--pipeline", "8"}));
  }

  TEST_CASE("a server certificate from another CA is exit 3 with OpenSSL's reason") {
    const TestTlsRedis& server = TestTlsRedis::shared();
    const ProcessOutcome outcome =
        lua_over_tls(server, {"--tls-ca", server.files().unknown_ca_cert});
    // The server sends its chain up to the shared CA, which is self-signed and not trusted.
    check_refused(outcome,
                  "certificate verify failed (self-signed certificate in certificate chain)");
    CHECK(outcome.err.find(server.url()) != std::string::npos);
  }

  TEST_CASE("--insecure skips verification: the test runs without a CA") {
    check_exact_pass(lua_over_tls(TestTlsRedis::shared(), {"--insecure"}));
  }

  TEST_CASE("--tls-sni with a name the certificate does not carry is a hostname mismatch") {
    const TestTlsRedis& server = TestTlsRedis::shared();
    // The certificate is for 127.0.0.1 and localhost; the name sent and verified is another.
    check_refused(
        lua_over_tls(server, {"--tls-ca", server.ca_file(), "--tls-sni", "redis.example"}),
        "hostname mismatch");
    check_exact_pass(
        lua_over_tls(server, {"--tls-ca", server.ca_file(), "--tls-sni", "localhost"}));
  }

  TEST_CASE("a server that wants a client certificate gets --tls-cert and --tls-key") {
    const TestTlsRedis& server = TestTlsRedis::shared_client_auth();
    check_exact_pass(
        lua_over_tls(server, {"--tls-ca", server.ca_file(), "--tls-cert", server.client_cert_file(),
                              "--tls-key", server.client_key_file()}));

    const ProcessOutcome without = lua_over_tls(server, {"--tls-ca", server.ca_file()});
    CAPTURE(without.err);
    CHECK_FALSE(without.timed_out);
    CHECK(without.exit_code == 3);
    CHECK(without.err.find(server.url()) != std::string::npos);
    // TLS 1.3: the server refuses after the client's handshake is done. Its alert arrives on
    // the first read; when the client's first write meets the closed connection first, the
    // alert is lost with it.
    CHECK((without.err.find("alert certificate required") != std::string::npos ||
           without.err.find("the server closed the connection") != std::string::npos));
  }
}
