#include "http/request_template.hpp"

#include <charconv>

#include <fmt/format.h>

#include "http/field_text.hpp"

namespace rlcheck::http {
namespace {

engine::PlaceholderTemplate text_template(std::string_view text) {
  // Braces that name no placeholder stay text, as for curl; this cannot fail.
  return *engine::PlaceholderTemplate::parse(text, engine::PlaceholderTemplate::Unknown::keep);
}

std::string_view field_name(std::string_view line) {
  std::string_view name = line.substr(0, line.find(':'));
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t'))
    name.remove_suffix(1);
  return name;
}

bool has_no_value(std::string_view line) {
  const size_t colon = line.find(':');
  return colon != std::string_view::npos &&
         line.find_first_not_of(" \t", colon + 1) == std::string_view::npos;
}

}  // namespace

std::expected<HttpUrl, std::string> parse_http_url(std::string_view url) {
  HttpUrl parsed;
  if (url.starts_with("https://")) {
    parsed.tls = true;
    parsed.port = 443;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else {
    return std::unexpected("not an http:// or https:// URL");
  }
  const size_t end = url.find_first_of("/?#");
  std::string_view authority = url.substr(0, end);
  std::string_view rest = end == std::string_view::npos ? std::string_view() : url.substr(end);
  if (authority.find('@') != std::string_view::npos)
    return std::unexpected("credentials in the URL (user:password@)");
  if (authority.find('{') != std::string_view::npos)
    return std::unexpected("a placeholder in the URL's host or port");
  if (authority.empty())
    return std::unexpected("no host in the URL");
  parsed.authority = std::string(authority);

  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return std::unexpected("an unclosed [ in the URL's host");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return std::unexpected("text after the URL's [address]");
      port = after.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty())
    return std::unexpected("no host in the URL");
  parsed.host = std::string(host);
  if (!port.empty()) {
    int value = 0;
    const auto [last, code] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (code != std::errc() || last != port.data() + port.size() || value <= 0 || value > 65535)
      return std::unexpected(fmt::format("'{}' is not a port", port));
    parsed.port = value;
  }

  rest = rest.substr(0, rest.find('#'));  // a fragment is never sent
  parsed.target = rest.empty() || rest.front() != '/' ? "/" + std::string(rest) : std::string(rest);
  return parsed;
}

RequestTemplate RequestTemplate::make(const std::string& method, const HttpUrl& url,
                                      const std::vector<std::string>& headers,
                                      const std::optional<std::string>& body) {
  RequestTemplate request;
  request.head_request_ = method == "HEAD";
  const auto given = [&](std::string_view name) {
    for (const std::string& line : headers) {
      if (iequals(field_name(line), name))
        return true;
    }
    return false;
  };

  std::string head = fmt::format("{} {} HTTP/1.1\r\n", method, url.target);
  if (!given("Host"))
    head += fmt::format("Host: {}\r\n", url.authority);
  if (!given("User-Agent"))
    head += "User-Agent: rlcheck\r\n";
  if (!given("Accept"))
    head += "Accept: */*\r\n";
  if (body && !given("Content-Type"))
    head += "Content-Type: application/x-www-form-urlencoded\r\n";
  for (const std::string& line : headers) {
    if (has_no_value(line))
      continue;  // "Name:" only removes the default field
    head += line;
    head += "\r\n";
  }

  std::optional<engine::PlaceholderTemplate> body_template;
  if (body)
    body_template = text_template(*body);
  if (body_template && body_template->is_constant() && !given("Content-Length"))
    head += fmt::format("Content-Length: {}\r\n", body->size());
  request.head_ = text_template(head);
  if (body_template && !body_template->is_constant())
    request.varying_body_ = std::move(body_template);

  if (request.head_.is_constant() && !request.varying_body_) {
    request.is_constant_ = true;
    request.constant_ = head + "\r\n" + body.value_or("");
  }
  return request;
}

const std::string& RequestTemplate::render(const engine::PlaceholderContext& context,
                                           std::string& scratch) const {
  if (is_constant_)
    return constant_;
  head_.expand_into(context, scratch);
  if (varying_body_) {
    varying_body_->expand_into(context, body_scratch_);
    scratch += "Content-Length: ";
    scratch += std::to_string(body_scratch_.size());
    scratch += "\r\n\r\n";
    scratch += body_scratch_;
  } else {
    scratch += "\r\n";
  }
  return scratch;
}

}  // namespace rlcheck::http
