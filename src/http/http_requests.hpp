#pragma once
// The requests of one HTTP run as both clients read them (http/native_client and the curl
// client): method, URL, headers and body as placeholder templates, the status rules, timeouts,
// TLS and source addresses. Read-only while the run lasts; shared by every client.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/duration.hpp"
#include "engine/placeholder_template.hpp"
#include "http/response_rules.hpp"

namespace rlcheck::http {

// The requests of one run, read-only and shared by every client.
struct HttpRequests {
  std::string method = "GET";
  engine::PlaceholderTemplate url;
  // The same, as written (the native client serialises the whole request once).
  std::string url_text;
  std::vector<std::string> header_texts;
  std::optional<std::string> body_text;
  bool native = true;  // the native HTTP/1.1 client (http/native_client), else curl
  bool http2 = false;  // --http2: curl, HTTP/2 (over TLS by ALPN; h2c with prior knowledge)
  std::vector<engine::PlaceholderTemplate> headers;  // "Name: value"
  std::optional<engine::PlaceholderTemplate> body;
  ResponseRules rules;
  config::Nanos timeout{std::chrono::seconds(5)};
  config::TlsConfig tls;  // https://: CA, client certificate, --insecure (sni unsupported)
  int concurrency = 50;   // connections the multi handle may keep
  // limit, window, run; seq, identity and rng per request
  engine::PlaceholderContext placeholders;
  uint64_t seed = 0;
  // --source-address: identity j sends from address j mod count; empty: the system's choice.
  std::vector<std::string> source_addresses;

  // The index into source_addresses of identity `identity`'s address (0 without any).
  size_t source_index(uint32_t identity) const {
    if (source_addresses.empty())
      return 0;
    return static_cast<size_t>(identity % source_addresses.size());
  }
};

}  // namespace rlcheck::http
