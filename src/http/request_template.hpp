#pragma once
// The native HTTP/1.1 client's writing side: the bytes of one run's request, serialised once
// (request line, Host, rlcheck's default fields, the --header lines, Content-Length) and, when
// placeholders vary, expanded per request into the same buffer. Only what curl would send.

#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/placeholder_template.hpp"

namespace rlcheck::http {

// An http:// or https:// URL, split for a connection and a request line.
struct HttpUrl {
  bool tls = false;
  std::string host;  // without brackets around an IPv6 address
  int port = 80;
  std::string authority;  // host[:port] as written: the Host field
  std::string target;     // path and query, "/" at least; may hold placeholders
};

// Splits `url`; an error names what the native client cannot do with it (user:password@, a
// placeholder in the host or port, no host).
std::expected<HttpUrl, std::string> parse_http_url(std::string_view url);

class RequestTemplate {
 public:
  // `headers` are "Name: value" lines; they replace rlcheck's default field of the same name,
  // and "Name:" with no value removes it, as with curl.
  static RequestTemplate make(const std::string& method, const HttpUrl& url,
                              const std::vector<std::string>& headers,
                              const std::optional<std::string>& body);

  // The request's bytes. Constant requests come from the cache; others are expanded into
  // `scratch`, which is returned.
  const std::string& render(const engine::PlaceholderContext& context, std::string& scratch) const;
  bool head_request() const { return head_request_; }

 private:
  engine::PlaceholderTemplate head_;  // up to the fields; no Content-Length when the body varies
  std::optional<engine::PlaceholderTemplate> varying_body_;
  std::string constant_;  // the whole request, when nothing varies
  bool is_constant_ = false;
  bool head_request_ = false;
  mutable std::string body_scratch_;
};

}  // namespace rlcheck::http
