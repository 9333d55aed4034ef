#include "support/test_tls.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include "support/real_server.hpp"
#include "support/run_binary.hpp"

namespace rlcheck::testing {
namespace {

constexpr auto k_start_limit = std::chrono::seconds(10);

std::string temporary_directory(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed");
  return pattern;
}

void run_openssl(const std::string& openssl, std::vector<std::string> args) {
  args.insert(args.begin(), openssl);
  const ProcessOutcome outcome = run_process(args);
  if (outcome.exit_code != 0) {
    throw std::runtime_error(
        fmt::format("openssl {} failed (exit {}): {}", args[1], outcome.exit_code, outcome.err));
  }
}

// `openssl x509 -req` serial numbers: distinct per certificate, as verifiers expect.
std::string random_serial() {
  std::random_device device;
  return fmt::format("0x{:08x}{:08x}", device(), device());
}

const std::vector<std::string> k_ec_key{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                        "-noenc"};

std::vector<std::string> with_key(std::vector<std::string> args) {
  args.insert(args.begin() + 2, k_ec_key.begin(), k_ec_key.end());
  return args;
}

// A self-signed CA certificate and its key.
void make_ca(const std::string& openssl, const std::string& cert, const std::string& key,
             const std::string& name) {
  run_openssl(openssl,
              with_key({"req", "-x509", "-keyout", key, "-out", cert, "-days", "2", "-subj",
                        "/CN=" + name, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                        "keyUsage=critical,keyCertSign,cRLSign"}));
}

// A key, and a certificate for it signed by the CA, with the extensions of `extensions`.
void make_signed(const std::string& openssl, const std::string& dir, const std::string& stem,
                 const std::string& subject, const std::string& extensions,
                 const std::string& ca_cert, const std::string& ca_key) {
  const std::string csr = fmt::format("{}/{}.csr", dir, stem);
  const std::string ext = fmt::format("{}/{}.ext", dir, stem);
  run_openssl(openssl, with_key({"req", "-new", "-keyout", fmt::format("{}/{}.key", dir, stem),
                                 "-out", csr, "-subj", subject}));
  std::ofstream(ext) << extensions;
  run_openssl(openssl, {"x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, "-set_serial",
                        random_serial(), "-days", "2", "-extfile", ext, "-out",
                        fmt::format("{}/{}.crt", dir, stem)});
  std::filesystem::remove(csr);
  std::filesystem::remove(ext);
}

struct SharedTlsDirectory {
  std::string path = temporary_directory("rlcheck-test-tls");
  TlsFiles files = make_tls_files(path);
  ~SharedTlsDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string required_tool(const std::string& name, const std::string& package) {
  auto path = process::find_on_path(name);
  if (!path) {
    throw std::runtime_error(fmt::format("{} is not on PATH (Debian package {})", name, package));
  }
  return *path;
}

TlsFiles make_tls_files(const std::string& dir) {
  const std::string openssl = required_tool("openssl", "openssl");
  TlsFiles files;
  auto path = [&dir](const char* name) { return fmt::format("{}/{}", dir, name); };
  files.ca_cert = path("ca.crt");
  files.ca_key = path("ca.key");
  files.server_cert = path("server.crt");
  files.server_key = path("server.key");
  files.client_cert = path("client.crt");
  files.client_key = path("client.key");
  files.unknown_ca_cert = path("unknown-ca.crt");
  files.unknown_ca_key = path("unknown-ca.key");
  files.unknown_client_cert = path("unknown-client.crt");
  files.unknown_client_key = path("unknown-client.key");

  make_ca(openssl, files.ca_cert, files.ca_key, "rlcheck test CA");
  make_signed(openssl, dir, "server", "/CN=localhost",
              "basicConstraints=CA:FALSE\n"
              "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
              "extendedKeyUsage=serverAuth\n",
              files.ca_cert, files.ca_key);
  make_signed(openssl, dir, "client", "/CN=rlcheck test client",
              "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n", files.ca_cert,
              files.ca_key);
  make_ca(openssl, files.unknown_ca_cert, files.unknown_ca_key, "rlcheck unknown CA");
  make_signed(openssl, dir, "unknown-client", "/CN=rlcheck unknown client",
              "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n", files.unknown_ca_cert,
              files.unknown_ca_key);
  return files;
}

const TlsFiles& shared_tls_files() {
  static SharedTlsDirectory shared;
  return shared.files;
}

TestTlsRedis& TestTlsRedis::shared() {
  static TestTlsRedis server(false);
  return server;
}

TestTlsRedis& TestTlsRedis::shared_client_auth() {
  static TestTlsRedis server(true);
  return server;
}

TestTlsRedis::TestTlsRedis(bool client_auth) : client_auth_(client_auth) {
  const std::string redis_server = required_tool("redis-server", "redis-server");
  const TlsFiles& tls = shared_tls_files();
  directory_ = temporary_directory("rlcheck-test-tls-redis");
  port_ = free_loopback_port();
  const std::string log = directory_ + "/redis.log";
  // clang-format off
  const std::vector<std::string> argv{
      redis_server, "--port", "0", "--tls-port", std::to_string(port_), "--bind", "127.0.0.1",
      "--tls-cert-file", tls.server_cert, "--tls-key-file", tls.server_key,
      "--tls-ca-cert-file", tls.ca_cert, "--tls-auth-clients", client_auth ? "yes" : "no",
      "--dir", directory_, "--save", "", "--appendonly", "no", "--logfile", log};
  // clang-format on
  auto server = process::ChildProcess::spawn(argv);
  if (!server)
    throw std::runtime_error(server.error());
  server_.emplace(std::move(*server));

  // Ready when its log says so, within a bound; a server that exits says why in the log.
  const auto deadline = std::chrono::steady_clock::now() + k_start_limit;
  while (read_text(log).find("Ready to accept connections") == std::string::npos) {
    if (auto status = server_->wait_for(std::chrono::milliseconds(20))) {
      throw std::runtime_error(
          fmt::format("TLS redis-server exited with status {}: {}", *status, read_text(log)));
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("TLS redis-server did not start: " + read_text(log));
  }
}

TestTlsRedis::~TestTlsRedis() {
  server_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::string TestTlsRedis::url() const {
  return fmt::format("rediss://127.0.0.1:{}", port_);
}

TestHttpsServer::TestHttpsServer(bool client_auth) {
  const std::string openssl = required_tool("openssl", "openssl");
  const TlsFiles& tls = shared_tls_files();
  directory_ = temporary_directory("rlcheck-test-https");
  std::ofstream(directory_ + "/ok.txt") << "ok\n";
  port_ = free_loopback_port();
  // clang-format off
  std::vector<std::string> argv{openssl, "s_server", "-accept",
                                "127.0.0.1:" + std::to_string(port_), "-cert", tls.server_cert,
                                "-key", tls.server_key, "-WWW", "-quiet"};
  // clang-format on
  if (client_auth) {
    argv.insert(argv.end(), {"-CAfile", tls.ca_cert, "-Verify", "1", "-verify_return_error"});
  }
  // s_server -WWW serves files relative to its working directory: start it through a shell
  // that changes there first (exec keeps the pid the one ChildProcess stops).
  std::string command = "cd \"$0\" && exec \"$@\"";
  argv.insert(argv.begin(), {"/bin/sh", "-c", command, directory_});
  auto server = process::ChildProcess::spawn(argv);
  if (!server)
    throw std::runtime_error(server.error());
  server_.emplace(std::move(*server));
  const auto deadline = std::chrono::steady_clock::now() + k_start_limit;
  while (!accepts_connections(port_)) {
    if (auto status = server_->wait_for(std::chrono::milliseconds(20)))
      throw std::runtime_error(fmt::format("openssl s_server exited with status {}", *status));
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("openssl s_server did not start");
  }
}

TestHttpsServer::~TestHttpsServer() {
  server_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::string TestHttpsServer::url() const {
  return fmt::format("https://127.0.0.1:{}/ok.txt", port_);
}

}  // namespace rlcheck::testing
