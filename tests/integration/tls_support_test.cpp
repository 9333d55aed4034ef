// The TLS and ACL test support itself: certificates that verify (and ones that must not), a
// redis-server that answers only over TLS, and ACL users on the shared Redis. rlcheck is not
// run here.

#include <doctest/doctest.h>

#include "support/run_binary.hpp"
#include "support/test_acl.hpp"
#include "support/test_tls.hpp"

using namespace rlcheck::testing;

namespace {

ProcessOutcome openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{required_tool("openssl", "openssl")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

bool verifies(const std::string& ca, const std::string& cert, const std::string& purpose) {
  const ProcessOutcome outcome = openssl({"verify", "-purpose", purpose, "-CAfile", ca, cert});
  CAPTURE(outcome.err);
  return outcome.exit_code == 0 && outcome.out.find(": OK") != std::string::npos;
}

// redis-cli PING over TLS, with `extra` arguments; what it printed on stdout.
ProcessOutcome tls_ping(const TestTlsRedis& server, const std::vector<std::string>& extra) {
  std::vector<std::string> argv{required_tool("redis-cli", "redis-tools"), "-h", "127.0.0.1", "-p",
                                std::to_string(server.port())};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("PING");
  RunOptions options;
  options.limit = std::chrono::seconds(10);
  return run_process(argv, options);
}

bool answered_pong(const ProcessOutcome& outcome) {
  return outcome.exit_code == 0 && outcome.out.find("PONG") != std::string::npos;
}

}  // namespace

TEST_CASE("test certificates verify against their CA and not against the unknown one") {
  const TlsFiles& tls = shared_tls_files();
  CHECK(verifies(tls.ca_cert, tls.server_cert, "sslserver"));
  CHECK(verifies(tls.ca_cert, tls.client_cert, "sslclient"));
  CHECK(verifies(tls.unknown_ca_cert, tls.unknown_client_cert, "sslclient"));
  CHECK_FALSE(verifies(tls.unknown_ca_cert, tls.server_cert, "sslserver"));
  CHECK_FALSE(verifies(tls.ca_cert, tls.unknown_client_cert, "sslclient"));

  const ProcessOutcome names =
      openssl({"x509", "-in", tls.server_cert, "-noout", "-ext", "subjectAltName"});
  REQUIRE(names.exit_code == 0);
  CHECK(names.out.find("IP Address:127.0.0.1") != std::string::npos);
  CHECK(names.out.find("DNS:localhost") != std::string::npos);
}

TEST_CASE("the TLS redis-server answers PING over TLS only") {
  TestTlsRedis& server = TestTlsRedis::shared();
  CHECK(server.url() == "rediss://127.0.0.1:" + std::to_string(server.port()));
  CHECK_FALSE(server.requires_client_certificate());
  CHECK(answered_pong(tls_ping(server, {"--tls", "--cacert", server.ca_file()})));
  CHECK(answered_pong(
      tls_ping(server, {"--tls", "--cacert", server.ca_file(), "--sni", "localhost"})));
  CHECK_FALSE(answered_pong(tls_ping(server, {})));  // plaintext
  CHECK_FALSE(
      answered_pong(tls_ping(server, {"--tls", "--cacert", server.files().unknown_ca_cert})));
  CHECK(answered_pong(tls_ping(server, {"--tls", "--insecure"})));
}

TEST_CASE("the client-auth TLS redis-server wants a certificate from its CA") {
  TestTlsRedis& server = TestTlsRedis::shared_client_auth();
  CHECK(server.requires_client_certificate());
  CHECK(server.port() != TestTlsRedis::shared().port());
  CHECK(answered_pong(
      tls_ping(server, {"--tls", "--cacert", server.ca_file(), "--cert", server.client_cert_file(),
                        "--key", server.client_key_file()})));
  CHECK_FALSE(answered_pong(tls_ping(server, {"--tls", "--cacert", server.ca_file()})));
  CHECK_FALSE(answered_pong(tls_ping(
      server, {"--tls", "--cacert", server.ca_file(), "--cert", server.files().unknown_client_cert,
               "--key", server.files().unknown_client_key})));
}

TEST_CASE("ACL users are created on the shared Redis, and replaced when made again") {
  create_acl_user("rlcheck-support-user", "pw", sliding_window_user_rules());
  CHECK(acl_user_exists("rlcheck-support-user"));
  create_acl_user("rlcheck-support-user", "pw", {"+ping"});
  CHECK(acl_user_exists("rlcheck-support-user"));
  CHECK_FALSE(acl_user_exists("rlcheck-no-such-user"));
  CHECK_THROWS(create_acl_user("rlcheck-support-user", "pw", {"+no-such-command"}));
  CHECK(acl_user_url("u", "p").starts_with("redis://u:p@127.0.0.1:"));
}
