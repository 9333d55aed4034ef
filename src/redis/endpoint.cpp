#include "redis/endpoint.hpp"

#include <charconv>

#include <fmt/format.h>

namespace rlcheck::redis {
namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int value = 0;
      auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      if (ec == std::errc() && end == text.data() + i + 3) {
        out.push_back(static_cast<char>(value));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace

std::string Endpoint::display() const {
  std::string credentials;
  if (!user.empty() || !password.empty()) {
    credentials = fmt::format("{}{}@", user, password.empty() ? "" : ":***");
  }
  if (is_unix()) {
    return db == 0 ? fmt::format("unix://{}", socket_path)
                   : fmt::format("unix://{}?db={}", socket_path, db);
  }
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string shown_host = ipv6 ? fmt::format("[{}]", host) : host;
  const char* scheme = tls ? "rediss" : "redis";
  return db == 0 ? fmt::format("{}://{}{}:{}", scheme, credentials, shown_host, port)
                 : fmt::format("{}://{}{}:{}/{}", scheme, credentials, shown_host, port, db);
}

std::expected<Endpoint, std::string> parse_endpoint(std::string_view url) {
  Endpoint endpoint;
  if (url.starts_with("unix://")) {
    std::string_view rest = url.substr(7);
    if (const size_t query = rest.find("?db="); query != std::string_view::npos) {
      auto db = parse_int(rest.substr(query + 4));
      if (!db || *db < 0)
        return std::unexpected(fmt::format("'{}': bad database number", url));
      endpoint.db = *db;
      rest = rest.substr(0, query);
    }
    if (rest.empty() || rest.front() != '/') {
      return std::unexpected(
          fmt::format("'{}': a unix socket URL needs an absolute path: unix:///path/to.sock", url));
    }
    endpoint.socket_path = std::string(rest);
    return endpoint;
  }
  endpoint.tls = url.starts_with("rediss://");
  if (!endpoint.tls && !url.starts_with("redis://")) {
    return std::unexpected(
        fmt::format("'{}' is not a Redis URL; expected redis://[user:pass@]host:port[/db], "
                    "rediss://... (TLS) or unix:///path",
                    url));
  }
  std::string_view rest = url.substr(endpoint.tls ? 9 : 8);
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view credentials = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const size_t colon = credentials.find(':');
    if (colon == std::string_view::npos) {
      endpoint.password = percent_decode(credentials);  // redis://secret@host: password only
    } else {
      endpoint.user = percent_decode(credentials.substr(0, colon));
      endpoint.password = percent_decode(credentials.substr(colon + 1));
    }
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db_text = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db_text.empty()) {
      auto db = parse_int(db_text);
      if (!db || *db < 0)
        return std::unexpected(fmt::format("'{}': bad database number", url));
      endpoint.db = *db;
    }
  }
  std::string_view host = rest;
  std::string_view port_text;
  if (rest.starts_with('[')) {  // [::1]:6379
    const size_t close = rest.find(']');
    if (close == std::string_view::npos)
      return std::unexpected(fmt::format("'{}': unclosed [", url));
    host = rest.substr(1, close - 1);
    std::string_view after = rest.substr(close + 1);
    if (after.starts_with(':'))
      port_text = after.substr(1);
    else if (!after.empty())
      return std::unexpected(fmt::format("'{}': bad host", url));
  } else if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
  }
  if (host.empty())
    return std::unexpected(fmt::format("'{}' names no host", url));
  endpoint.host = std::string(host);
  if (!port_text.empty() || rest.ends_with(':')) {
    auto port = parse_int(port_text);
    if (!port || *port < 1 || *port > 65535) {
      return std::unexpected(fmt::format("'{}': port must be 1-65535", url));
    }
    endpoint.port = *port;
  }
  return endpoint;
}

}  // namespace rlcheck::redis
