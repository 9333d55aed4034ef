#include "http/client_choice.hpp"

#include <fmt/format.h>

#include "http/curl_client.hpp"
#include "http/native_client.hpp"
#include "http/request_template.hpp"

namespace rlcheck::http {
namespace {

// The proxy variable curl would use for `url`, if one is set (curl reads http_proxy in lower
// case only).
std::string proxy_variable(const std::string& url, const EnvLookup& env) {
  const bool tls = url.starts_with("https://");
  const char* names_http[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
  const char* names_https[] = {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
  const auto check = [&](auto& names) -> std::string {
    for (const char* name : names) {
      if (const char* value = env(name); value != nullptr && *value != '\0')
        return name;
    }
    return {};
  };
  return tls ? check(names_https) : check(names_http);
}

}  // namespace

std::expected<ClientChoice, std::string> choose_http_client(config::HttpClientChoice choice,
                                                            const std::string& url, bool http2,
                                                            const EnvLookup& env) {
  if (choice == config::HttpClientChoice::curl)
    return ClientChoice{false, {}};
  std::string why_curl;
  if (http2) {
    why_curl = "--http2";
  } else if (const std::string proxy = proxy_variable(url, env); !proxy.empty()) {
    why_curl = fmt::format("the proxy in ${}", proxy);
  } else if (auto parsed = parse_http_url(url); !parsed) {
    why_curl = parsed.error();
  }
  if (why_curl.empty())
    return ClientChoice{true, {}};
  if (choice == config::HttpClientChoice::native)
    return std::unexpected(fmt::format("--http-client: native cannot serve {}: {}", url, why_curl));
  return ClientChoice{false, std::move(why_curl)};
}

std::unique_ptr<engine::ClientFactory> make_http_client_factory(const HttpRequests& requests) {
  if (requests.native) {
    if (auto url = parse_http_url(requests.url_text))
      return std::make_unique<NativeClientFactory>(requests, std::move(*url));
  }
  return make_curl_client_factory(requests);
}

}  // namespace rlcheck::http
