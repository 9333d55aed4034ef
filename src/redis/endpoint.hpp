#pragma once
// Where a Redis server is and how to log in: parsed from redis://, rediss:// and unix:// URLs.

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace rlcheck::redis {

struct Endpoint {
  std::string host;         // TCP host; empty for a unix socket
  int port = 6379;          // TCP port
  std::string socket_path;  // unix socket; empty for TCP
  std::string user;         // ACL user; empty: the default user
  std::string password;     // empty: no AUTH
  int db = 0;               // SELECTed after connecting when not 0
  bool tls = false;         // rediss://: the connection speaks TLS
  // With `tls`: how to verify the server and present a client certificate (--tls-*,
  // --insecure). The URL does not say; connect_target copies it from the command line.
  config::TlsConfig tls_options;

  bool is_unix() const { return !socket_path.empty(); }
  // The same login and TLS settings at another host and port (a cluster node).
  Endpoint at(std::string node_host, int node_port) const {
    Endpoint node = *this;
    node.host = std::move(node_host);
    node.port = node_port;
    node.socket_path.clear();
    return node;
  }
  // The URL with any password shown as ***, for reports and messages.
  std::string display() const;
};

// redis://[user:pass@]host[:port][/db], rediss://... (the same, over TLS; `tls` set,
// `tls_options` left empty), unix:///path/to.sock[?db=N]. The port defaults to 6379 for both
// schemes. On error, the reason in words that can follow the flag name.
std::expected<Endpoint, std::string> parse_endpoint(std::string_view url);

}  // namespace rlcheck::redis
