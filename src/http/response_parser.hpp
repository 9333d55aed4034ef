#pragma once
// The native HTTP/1.1 client's reading side: Node's http_parser (libhttp-parser) fed the bytes
// of a connection, one response at a time. Keeps the status and the header fields, counts the
// body without keeping it, and stops at the response's end, so what follows stays unread.
// Bounded: headers past their cap are an error, not memory; a body is counted, not kept.

#include <cstddef>
#include <cstdint>
#include <string>

#include <http_parser.h>

#include "http/ratelimit_headers.hpp"

namespace rlcheck::http {

class ResponseParser {
 public:
  enum class State {
    incomplete,  // more bytes needed
    complete,    // a whole final response (1xx interim responses are skipped)
    failed,      // not HTTP, or over a cap: see error()
  };
  // What curl accepts: 300 KB of headers in all, 100 KB in one line (field name and value).
  static constexpr size_t k_max_header_bytes = 300 * 1024;
  static constexpr size_t k_max_header_line_bytes = 100 * 1024;
  // And at most this many fields, so tiny fields cannot multiply what each one costs to keep.
  static constexpr size_t k_max_header_fields = 10'000;

  ResponseParser();
  ResponseParser(const ResponseParser&) = delete;
  ResponseParser& operator=(const ResponseParser&) = delete;

  // Ready for the response to `method`'s request (a HEAD response has no body).
  void reset(bool head_request);
  // Reads from `data`; `used` says how many bytes belonged to this response.
  State feed(const char* data, size_t size, size_t& used);
  // The peer closed: completes a response whose body runs to the close.
  State feed_eof();

  State state() const { return state_; }
  // Whether any byte of the response arrived.
  bool started() const { return started_; }
  int status() const { return status_; }
  const HeaderList& headers() const { return headers_; }
  // The connection may carry another request (HTTP/1.1 without Connection: close).
  bool keep_alive() const { return keep_alive_; }
  uint64_t body_bytes() const { return body_bytes_; }
  const std::string& error() const { return error_; }
  // Failed over the header cap, rather than on bytes that are not HTTP.
  bool over_cap() const { return over_cap_; }

 private:
  static int on_message_begin(http_parser* parser);
  static int on_status(http_parser* parser, const char* at, size_t length);
  static int on_header_field(http_parser* parser, const char* at, size_t length);
  static int on_header_value(http_parser* parser, const char* at, size_t length);
  static int on_headers_complete(http_parser* parser);
  static int on_body(http_parser* parser, const char* at, size_t length);
  static int on_message_complete(http_parser* parser);
  State fail(std::string why);
  bool add_header_bytes(size_t length);
  State over(std::string what);

  http_parser parser_{};
  http_parser_settings settings_{};
  State state_ = State::incomplete;
  bool head_request_ = false;
  bool started_ = false;
  bool in_value_ = false;  // the last header callback was a value
  int status_ = 0;
  HeaderList headers_;
  size_t header_bytes_ = 0;
  size_t line_bytes_ = 0;  // of the header line being read
  uint64_t body_bytes_ = 0;
  bool keep_alive_ = false;
  std::string error_;
  bool over_cap_ = false;
};

}  // namespace rlcheck::http
