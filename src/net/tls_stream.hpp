#pragma once
// TLS for rediss:// and https:// connections, on OpenSSL: one context per set of TLS options (the
// CA that verifies the server, a client certificate), shared by every connection and thread, and a
// Stream that speaks TLS over a connected socket.

#include <expected>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "net/stream.hpp"

typedef struct ssl_ctx_st SSL_CTX;

namespace rlcheck::net {

class TlsContext {
 public:
  // The context for these options, made once per process. On error (a CA or certificate file
  // OpenSSL cannot read): why, naming the file.
  static std::expected<std::shared_ptr<TlsContext>, std::string> shared_for(
      const config::TlsConfig& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A TLS stream over the connected socket `fd` (owned from now on), verifying `host` (or
  // --tls-sni) unless --insecure.
  std::unique_ptr<Stream> wrap(int fd, const std::string& host) const;

 private:
  TlsContext(SSL_CTX* context, config::TlsConfig options)
      : context_(context), options_(std::move(options)) {}
  SSL_CTX* context_;
  config::TlsConfig options_;
};

}  // namespace rlcheck::net
