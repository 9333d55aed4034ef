// rlcheck http against an HTTPS endpoint: --tls-ca verifies the server, --tls-cert and
// --tls-key answer a server that asks for a client certificate, --insecure skips verification.

#include <doctest/doctest.h>

#include "support/run_binary.hpp"
#include "support/test_tls.hpp"

using namespace rlcheck::testing;

namespace {

// Five requests, one at a time, all allowed (200) when the handshake succeeds.
ProcessOutcome five_requests(const TestHttpsServer& server, std::vector<std::string> extra) {
  std::vector<std::string> args{"http", server.url(), "-n", "5",   "-p",        "1",  "-r", "1",
                                "-l",   "10",         "-w", "10s", "--timeout", "3s", "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_rlcheck(args);
}

}  // namespace

TEST_CASE("https: the CA of --tls-ca verifies the server; without it the handshake fails") {
  TestHttpsServer server(false);
  const TlsFiles& tls = shared_tls_files();

  const ProcessOutcome verified = five_requests(server, {"--tls-ca", tls.ca_cert});
  CAPTURE(verified.err);
  CHECK(verified.exit_code == 0);

  const ProcessOutcome unknown = five_requests(server, {"--tls-ca", tls.unknown_ca_cert});
  CAPTURE(unknown.err);
  // No request got through the handshake: no connection, as for a Redis over TLS.
  CHECK(unknown.exit_code == 3);
  CHECK(unknown.err.find("no connection to https://") != std::string::npos);

  const ProcessOutcome insecure = five_requests(server, {"--insecure"});
  CAPTURE(insecure.err);
  CHECK(insecure.exit_code == 0);
}

TEST_CASE("https: a server that wants a client certificate gets --tls-cert and --tls-key") {
  TestHttpsServer server(true);
  const TlsFiles& tls = shared_tls_files();

  const ProcessOutcome with_cert = five_requests(
      server,
      {"--tls-ca", tls.ca_cert, "--tls-cert", tls.client_cert, "--tls-key", tls.client_key});
  CAPTURE(with_cert.err);
  CHECK(with_cert.exit_code == 0);

  const ProcessOutcome without = five_requests(server, {"--tls-ca", tls.ca_cert});
  CAPTURE(without.out);
  CHECK(without.exit_code == 3);

  const ProcessOutcome stranger =
      five_requests(server, {"--tls-ca", tls.ca_cert, "--tls-cert", tls.unknown_client_cert,
                             "--tls-key", tls.unknown_client_key});
  CAPTURE(stranger.out);
  CHECK(stranger.exit_code == 3);
}
