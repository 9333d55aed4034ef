#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <unistd.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"
#include "redis/endpoint.hpp"

namespace rlcheck::cli {

const char* first_tls_flag(const RawOptions& raw) {
  if (raw.tls_ca)
    return "--tls-ca";
  if (raw.tls_cert)
    return "--tls-cert";
  if (raw.tls_key)
    return "--tls-key";
  if (raw.tls_sni)
    return "--tls-sni";
  if (raw.insecure)
    return "--insecure";
  return nullptr;
}

namespace {

using base::usage_error;

std::string readable_file(const char* flag, const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw base::usage_error(fmt::format("{}: no such file: {}", flag, path));
  if (!std::filesystem::is_regular_file(path, error))
    throw base::usage_error(fmt::format("{}: not a file: {}", flag, path));
  if (access(path.c_str(), R_OK) != 0)
    throw base::usage_error(
        fmt::format("{}: cannot read {}: {}", flag, path, std::strerror(errno)));
  return path;
}

// TLS applies to https:// endpoints; at least one of them must be one.
void check_http_target(const char* flag, const RawOptions& raw, const config::Config& config) {
  if (raw.tls_sni) {
    throw base::usage_error(
        "--tls-sni: not supported for HTTP endpoints (curl sends and verifies the URL's host "
        "name); put that name in the URL");
  }
  for (const std::string& url : config.http.urls) {
    if (url.starts_with("https://"))
      return;
  }
  if (config.http.urls.size() == 1) {
    throw base::usage_error(
        fmt::format("{}: {} is not TLS (https://)", flag, config.http.urls.front()));
  }
  throw base::usage_error(fmt::format("{}: none of the --url endpoints is TLS (https://)", flag));
}

// TLS applies to a rediss:// URL: --redis, else $REDIS_URL (connect_target's order). The
// default 127.0.0.1:6379 and the private servers are never TLS.
void check_redis_target(const char* flag, const RawOptions& raw) {
  if (raw.embedded_cluster) {
    throw base::usage_error(
        fmt::format("{}: the private cluster of --embedded-cluster is not TLS", flag));
  }
  std::optional<std::string> url = raw.redis_url;
  const char* source = "--redis";
  if (!url) {
    if (const char* env = std::getenv("REDIS_URL"); env != nullptr && *env != '\0') {
      url = env;
      source = "REDIS_URL";
    }
  }
  if (!url) {
    throw base::usage_error(
        fmt::format("{}: applies to a TLS Redis; give --redis rediss://host:port (the default "
                    "127.0.0.1:6379 and a private redis-server are not TLS)",
                    flag));
  }
  if (*url == config::k_embedded_url) {
    throw base::usage_error(
        fmt::format("{}: applies to a TLS Redis; the private redis-server is not TLS", flag));
  }
  auto endpoint = redis::parse_endpoint(*url);
  if (!endpoint)
    return;  // a bad $REDIS_URL is reported, naming it, when rlcheck connects
  if (!endpoint->tls) {
    throw base::usage_error(
        fmt::format("{}: the {} URL {} is not TLS (rediss://)", flag, source, endpoint->display()));
  }
}

}  // namespace

void fill_tls(const RawOptions& raw, bool http, config::Config& config) {
  const char* flag = first_tls_flag(raw);
  if (flag == nullptr)
    return;
  if (http)
    check_http_target(flag, raw, config);
  else
    check_redis_target(flag, raw);
  fill_tls_files(raw, config);
}

void fill_tls_files(const RawOptions& raw, config::Config& config) {
  if (raw.tls_cert && !raw.tls_key)
    throw base::usage_error("--tls-cert: needs --tls-key (the certificate's private key)");
  if (raw.tls_key && !raw.tls_cert)
    throw base::usage_error("--tls-key: needs --tls-cert (the certificate that key belongs to)");
  config::TlsConfig& tls = config.tls;
  if (raw.tls_ca)
    tls.ca_file = readable_file("--tls-ca", *raw.tls_ca);
  if (raw.tls_cert)
    tls.cert_file = readable_file("--tls-cert", *raw.tls_cert);
  if (raw.tls_key)
    tls.key_file = readable_file("--tls-key", *raw.tls_key);
  if (raw.tls_sni) {
    if (raw.tls_sni->empty())
      throw base::usage_error("--tls-sni: must not be empty");
    tls.sni = *raw.tls_sni;
  }
  tls.insecure = raw.insecure;
}

}  // namespace rlcheck::cli
