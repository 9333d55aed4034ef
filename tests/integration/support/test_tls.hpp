#pragma once
// TLS for the integration tests: throwaway certificates made with the openssl command, and
// redis-servers that speak only TLS (Debian's redis-server is built with it), started on first
// use and stopped when the test binary exits.

#include <optional>
#include <string>

#include "process/child_process.hpp"

namespace rlcheck::testing {

// PEM files in one folder. The server certificate is for 127.0.0.1 and localhost
// (subjectAltName IP and DNS); the client certificate is signed by the same CA. The unknown
// CA is unrelated: nothing it signed verifies against `ca_cert`, and the other way round.
struct TlsFiles {
  std::string ca_cert;
  std::string ca_key;
  std::string server_cert;
  std::string server_key;
  std::string client_cert;
  std::string client_key;
  std::string unknown_ca_cert;
  std::string unknown_ca_key;
  std::string unknown_client_cert;  // signed by the unknown CA
  std::string unknown_client_key;
};

// Makes the files in `dir` (which must exist) with EC P-256 keys, valid for two days. Throws
// std::runtime_error with openssl's message when a step fails.
TlsFiles make_tls_files(const std::string& dir);

// One set of files for the whole test binary, in a temporary folder removed at exit.
const TlsFiles& shared_tls_files();

// The full path of `name` on $PATH; throws std::runtime_error naming the package otherwise.
std::string required_tool(const std::string& name, const std::string& package);

class TestTlsRedis {
 public:
  // Clients need not present a certificate (--tls-auth-clients no).
  static TestTlsRedis& shared();
  // Clients must present one signed by the shared CA (--tls-auth-clients yes).
  static TestTlsRedis& shared_client_auth();
  ~TestTlsRedis();
  TestTlsRedis(const TestTlsRedis&) = delete;
  TestTlsRedis& operator=(const TestTlsRedis&) = delete;

  std::string url() const;  // rediss://127.0.0.1:PORT
  int port() const { return port_; }
  bool requires_client_certificate() const { return client_auth_; }
  const TlsFiles& files() const { return shared_tls_files(); }
  const std::string& ca_file() const { return files().ca_cert; }
  const std::string& client_cert_file() const { return files().client_cert; }
  const std::string& client_key_file() const { return files().client_key; }

 private:
  explicit TestTlsRedis(bool client_auth);
  bool client_auth_;
  std::string directory_;
  int port_ = 0;
  std::optional<process::ChildProcess> server_;
};

// `openssl s_server -WWW`: an HTTPS server on 127.0.0.1 with the shared server certificate,
// answering GET /ok.txt with 200 (HTTP/1.0, one connection at a time). With `client_auth`,
// the handshake fails unless the client presents a certificate signed by the shared CA.
// Stopped by the destructor.
class TestHttpsServer {
 public:
  explicit TestHttpsServer(bool client_auth);
  ~TestHttpsServer();
  TestHttpsServer(const TestHttpsServer&) = delete;
  TestHttpsServer& operator=(const TestHttpsServer&) = delete;

  std::string url() const;  // https://127.0.0.1:PORT/ok.txt
  int port() const { return port_; }

 private:
  std::string directory_;
  int port_ = 0;
  std::optional<process::ChildProcess> server_;
};

}  // namespace rlcheck::testing
