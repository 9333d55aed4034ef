#pragma once
// Which client sends a target's HTTP requests: the native HTTP/1.1 client unless the target
// needs curl (--http2, a proxy in the environment, a URL the native client declines), or the
// user chose curl (--http-client, RLCHECK_HTTP_CLIENT).

#include <expected>
#include <functional>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "engine/client.hpp"
#include "http/http_requests.hpp"

namespace rlcheck::http {

struct ClientChoice {
  bool native = true;
  std::string why_curl;  // when curl serves a requests the native client could not
};

using EnvLookup = std::function<const char*(const char*)>;

// An error when the user asked for native and the target needs curl: why, naming the flag.
std::expected<ClientChoice, std::string> choose_http_client(config::HttpClientChoice choice,
                                                            const std::string& url, bool http2,
                                                            const EnvLookup& env);

// The factory of the client `requests.native` names.
std::unique_ptr<engine::ClientFactory> make_http_client_factory(const HttpRequests& requests);

// "native" or "curl", for params.http_client.
inline const char* http_client_name(bool native) {
  return native ? "native" : "curl";
}

}  // namespace rlcheck::http
