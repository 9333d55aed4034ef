// The native HTTP client's pure parts: the URL split, the request bytes, the response parser
// (split reads, chunked, interim responses, the caps), and which client a target gets.

#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <string>

#include "http/client_choice.hpp"
#include "http/request_template.hpp"
#include "http/response_parser.hpp"

using rlcheck::config::HttpClientChoice;
using rlcheck::engine::PlaceholderContext;
using rlcheck::http::choose_http_client;
using rlcheck::http::parse_http_url;
using rlcheck::http::RequestTemplate;
using rlcheck::http::ResponseParser;
using State = ResponseParser::State;

namespace {

// Feeds `bytes` `step` at a time; the state at the end, and how many bytes were used.
State feed_in_steps(ResponseParser& parser, const std::string& bytes, size_t step,
                    size_t& used_total) {
  used_total = 0;
  State state = State::incomplete;
  for (size_t at = 0; at < bytes.size() && state == State::incomplete; at += step) {
    size_t used = 0;
    state = parser.feed(bytes.data() + at, std::min(step, bytes.size() - at), used);
    used_total += used;
  }
  return state;
}

}  // namespace

TEST_CASE("native http url: host, port, authority and target") {
  auto url = parse_http_url("https://[::1]:8443/a/{seq}?x=1#frag");
  REQUIRE(url);
  CHECK(url->tls);
  CHECK(url->host == "::1");
  CHECK(url->port == 8443);
  CHECK(url->authority == "[::1]:8443");
  CHECK(url->target == "/a/{seq}?x=1");
  auto bare = parse_http_url("http://example.test?q");
  REQUIRE(bare);
  CHECK(bare->port == 80);
  CHECK(bare->target == "/?q");
  CHECK_FALSE(parse_http_url("http://user:pw@host/"));
  CHECK_FALSE(parse_http_url("http://{id}.host/"));
  CHECK_FALSE(parse_http_url("http://host:99999/"));
  CHECK_FALSE(parse_http_url("http:///path"));
}

TEST_CASE("native http request: constant requests are cached; varying ones expanded") {
  auto url = parse_http_url("http://h:81/p?s={seq}");
  REQUIRE(url);
  const RequestTemplate request = RequestTemplate::make(
      "POST", *url, {"User-Agent: mine", "X-N: {seq}", "Accept:"}, std::string("n={seq}"));
  PlaceholderContext context;
  context.seq = 12;
  std::string scratch;
  CHECK(request.render(context, scratch) ==
        "POST /p?s=12 HTTP/1.1\r\nHost: h:81\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nUser-Agent: mine\r\nX-N: 12\r\n"
        "Content-Length: 4\r\n\r\nn=12");

  const RequestTemplate constant =
      RequestTemplate::make("GET", *parse_http_url("http://h/"), {}, std::nullopt);
  const std::string& first = constant.render(context, scratch);
  CHECK(first == "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: rlcheck\r\nAccept: */*\r\n\r\n");
  CHECK(&constant.render(context, scratch) == &first);  // no expansion per request
  CHECK_FALSE(constant.head_request());
}

TEST_CASE("native http parser: a response split anywhere reads the same") {
  const std::string response =
      "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7 \r\nTransfer-Encoding: chunked\r\n\r\n"
      "4\r\nabcd\r\n0\r\n\r\nHTTP/1.1 200";  // the start of another response stays unread
  for (size_t step : {1u, 3u, 17u, 4096u}) {
    ResponseParser parser;
    parser.reset(false);
    size_t used = 0;
    REQUIRE(feed_in_steps(parser, response, step, used) == State::complete);
    CHECK(used == response.size() - std::strlen("HTTP/1.1 200"));
    CHECK(parser.status() == 429);
    REQUIRE(parser.headers().size() == 2);
    CHECK(parser.headers()[0].first == "Retry-After");
    CHECK(parser.headers()[0].second == "7");
    CHECK(parser.body_bytes() == 4);
    CHECK(parser.keep_alive());
  }
}

TEST_CASE("native http parser: interim responses, close-delimited bodies, HEAD, errors") {
  ResponseParser parser;
  size_t used = 0;
  parser.reset(false);
  CHECK(feed_in_steps(parser, "HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\nHTTP/1.1 204 OK\r\n\r\n", 5,
                      used) == State::complete);
  CHECK(parser.status() == 204);
  CHECK(parser.headers().empty());

  parser.reset(false);
  CHECK(feed_in_steps(parser, "HTTP/1.0 200 OK\r\n\r\nuntil the close", 64, used) ==
        State::incomplete);
  CHECK(parser.feed_eof() == State::complete);
  CHECK_FALSE(parser.keep_alive());

  parser.reset(true);
  CHECK(feed_in_steps(parser, "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", 64, used) ==
        State::complete);

  parser.reset(false);
  CHECK(feed_in_steps(parser, "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort", 64, used) ==
        State::incomplete);
  CHECK(parser.feed_eof() == State::failed);

  parser.reset(false);
  CHECK(feed_in_steps(parser, "garbage\r\n\r\n", 64, used) == State::failed);
  CHECK(parser.error().find("not an HTTP response") != std::string::npos);

  parser.reset(false);
  const std::string huge = "HTTP/1.1 200 OK\r\nX: " + std::string(101 * 1024, 'a') + "\r\n\r\n";
  CHECK(feed_in_steps(parser, huge, 8192, used) == State::failed);
  CHECK(parser.over_cap());
  CHECK(parser.error().find("line over 100 KiB") != std::string::npos);
}

TEST_CASE("native http parser: accepts what curl accepts, 300 KB of headers, 100 KB a line") {
  // Four lines of 50 KB (200 KB): curl takes them, so does the native client.
  std::string head = "HTTP/1.1 429 Too Many Requests\r\n";
  for (int i = 0; i < 4; ++i)
    head += "X-Padding-" + std::to_string(i) + ": " + std::string(50 * 1024, 'p') + "\r\n";
  ResponseParser parser;
  size_t used = 0;
  parser.reset(false);
  CHECK(feed_in_steps(parser, head + "Retry-After: 3\r\nContent-Length: 0\r\n\r\n", 4096, used) ==
        State::complete);
  CHECK(parser.status() == 429);
  REQUIRE(parser.headers().size() == 6);
  CHECK(parser.headers()[1].second.size() == 50 * 1024);
  CHECK(parser.headers()[4] == std::pair<std::string, std::string>{"Retry-After", "3"});

  // Seven such lines (350 KB) are over the whole cap.
  for (int i = 4; i < 7; ++i)
    head += "X-Padding-" + std::to_string(i) + ": " + std::string(50 * 1024, 'p') + "\r\n";
  parser.reset(false);
  CHECK(feed_in_steps(parser, head + "\r\n", 4096, used) == State::failed);
  CHECK(parser.over_cap());
  CHECK(parser.error().find("over 300 KiB") != std::string::npos);
}

TEST_CASE("native http choice: native unless --http2, a proxy, or a URL it declines") {
  std::map<std::string, std::string> env;
  const auto lookup = [&](const char* name) -> const char* {
    auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  };
  const std::string url = "http://127.0.0.1:1/";
  CHECK(choose_http_client(HttpClientChoice::automatic, url, false, lookup)->native);
  CHECK_FALSE(choose_http_client(HttpClientChoice::curl, url, false, lookup)->native);
  CHECK_FALSE(choose_http_client(HttpClientChoice::automatic, url, true, lookup)->native);
  CHECK_FALSE(choose_http_client(HttpClientChoice::native, url, true, lookup));
  env["HTTPS_PROXY"] = "http://proxy:3128";
  CHECK(choose_http_client(HttpClientChoice::automatic, url, false, lookup)->native);
  env["http_proxy"] = "http://proxy:3128";
  auto proxied = choose_http_client(HttpClientChoice::automatic, url, false, lookup);
  CHECK_FALSE(proxied->native);
  CHECK(proxied->why_curl.find("http_proxy") != std::string::npos);
  auto refused = choose_http_client(HttpClientChoice::native, "http://u:p@h/", false, lookup);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("--http-client") != std::string::npos);
}
