#include "net/tls_stream.hpp"

#include <map>
#include <mutex>
#include <tuple>

#include <arpa/inet.h>
#include <unistd.h>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace rlcheck::net {
namespace {

// OpenSSL's queued errors as one line, the queue emptied.
std::string openssl_errors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    const char* reason = ERR_reason_error_string(code);
    if (!text.empty())
      text += "; ";
    text += reason != nullptr ? reason : buffer;
  }
  return text;
}

bool is_ip_address(const std::string& host) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

class TlsStream final : public Stream {
 public:
  TlsStream(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~TlsStream() override {
    SSL_free(ssl_);
    ::close(fd_);
  }
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  int fd() const override { return fd_; }

  IoResult handshake() override {
    const int status = SSL_connect(ssl_);
    if (status == 1)
      return {};
    return failure(status, "TLS handshake failed");
  }

  IoResult read(char* buffer, size_t size) override {
    size_t read = 0;
    const int status = SSL_read_ex(ssl_, buffer, size, &read);
    if (status == 1)
      return {IoStatus::done, read};
    return failure(status, "TLS read failed");
  }

  IoResult write(const char* data, size_t size) override {
    size_t written = 0;
    const int status = SSL_write_ex(ssl_, data, size, &written);
    if (status == 1)
      return {IoStatus::done, written};
    return failure(status, "TLS write failed");
  }

  bool has_buffered() const override { return SSL_pending(ssl_) > 0; }
  std::string error() const override { return error_; }

 private:
  IoResult failure(int status, const char* what) {
    switch (SSL_get_error(ssl_, status)) {
      case SSL_ERROR_WANT_READ:
        return {IoStatus::want_read, 0};
      case SSL_ERROR_WANT_WRITE:
        return {IoStatus::want_write, 0};
      case SSL_ERROR_ZERO_RETURN:
        return {IoStatus::closed, 0};
      default:
        break;
    }
    const long verify = SSL_get_verify_result(ssl_);
    std::string reasons = openssl_errors();
    if (verify != X509_V_OK) {
      error_ = fmt::format("{}: certificate verify failed ({})", what,
                           X509_verify_cert_error_string(verify));
    } else if (!reasons.empty()) {
      error_ = fmt::format("{}: {}", what, reasons);
    } else {
      error_ = fmt::format("{}: the server closed the connection", what);
      return {IoStatus::closed, 0};
    }
    return {IoStatus::failed, 0};
  }

  int fd_;
  SSL* ssl_;
  std::string error_;
};

}  // namespace

std::expected<std::shared_ptr<TlsContext>, std::string> TlsContext::shared_for(
    const config::TlsConfig& options) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::string, std::string, std::string, bool>,
                  std::shared_ptr<TlsContext>>
      contexts;
  const auto key = std::make_tuple(options.ca_file, options.cert_file, options.key_file,
                                   options.sni, options.insecure);
  std::lock_guard lock(mutex);
  if (auto found = contexts.find(key); found != contexts.end())
    return found->second;

  SSL_CTX* raw = SSL_CTX_new(TLS_client_method());
  if (raw == nullptr)
    return std::unexpected(fmt::format("cannot set up TLS: {}", openssl_errors()));
  std::shared_ptr<TlsContext> context(new TlsContext(raw, options));
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  SSL_CTX_set_mode(raw, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (!options.insecure) {
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr);
    const bool loaded = options.ca_file.empty() ? SSL_CTX_set_default_verify_paths(raw) == 1
                                                : SSL_CTX_load_verify_locations(
                                                      raw, options.ca_file.c_str(), nullptr) == 1;
    if (!loaded) {
      return std::unexpected(fmt::format(
          "--tls-ca: cannot load {}: {}",
          options.ca_file.empty() ? "the system CA store" : options.ca_file, openssl_errors()));
    }
  }
  if (!options.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(raw, options.cert_file.c_str()) != 1) {
      return std::unexpected(
          fmt::format("--tls-cert: cannot load {}: {}", options.cert_file, openssl_errors()));
    }
    if (SSL_CTX_use_PrivateKey_file(raw, options.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(raw) != 1) {
      return std::unexpected(
          fmt::format("--tls-key: cannot use {}: {}", options.key_file, openssl_errors()));
    }
  }
  contexts.emplace(key, context);
  return context;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(context_);
}

std::unique_ptr<Stream> TlsContext::wrap(int fd, const std::string& host) const {
  SSL* ssl = SSL_new(context_);
  SSL_set_fd(ssl, fd);
  const std::string& name = options_.sni.empty() ? host : options_.sni;
  if (!name.empty() && !is_ip_address(name))
    SSL_set_tlsext_host_name(ssl, name.c_str());
  if (!options_.insecure && !name.empty()) {
    // A name is checked against the certificate's DNS names, an address against its IPs.
    if (is_ip_address(name)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
    } else {
      SSL_set1_host(ssl, name.c_str());
    }
  }
  return std::make_unique<TlsStream>(fd, ssl);
}

}  // namespace rlcheck::net
