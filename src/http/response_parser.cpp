#include "http/response_parser.hpp"

#include <mutex>

#include <fmt/format.h>

namespace rlcheck::http {
namespace {

ResponseParser& self_of(http_parser* parser) {
  return *static_cast<ResponseParser*>(parser->data);
}

}  // namespace

ResponseParser::ResponseParser() {
  // http_parser's own cap on a response's header bytes (80 KB unless built otherwise) is
  // raised to ours, which the callbacks enforce (they see every byte first). It is a global of
  // the library: set once.
  static std::once_flag raised;
  std::call_once(raised, [] {
    http_parser_set_max_header_size(static_cast<uint32_t>(k_max_header_bytes + 4096));
  });
  settings_.on_message_begin = &ResponseParser::on_message_begin;
  settings_.on_status = &ResponseParser::on_status;
  settings_.on_header_field = &ResponseParser::on_header_field;
  settings_.on_header_value = &ResponseParser::on_header_value;
  settings_.on_headers_complete = &ResponseParser::on_headers_complete;
  settings_.on_body = &ResponseParser::on_body;
  settings_.on_message_complete = &ResponseParser::on_message_complete;
  reset(false);
}

void ResponseParser::reset(bool head_request) {
  http_parser_init(&parser_, HTTP_RESPONSE);
  parser_.data = this;
  // Control characters in a header value are kept, as curl keeps them: a bad Retry-After is
  // the checks' to judge (retry-after-valid), not a broken response.
  parser_.lenient_http_headers = 1;
  state_ = State::incomplete;
  head_request_ = head_request;
  started_ = false;
  in_value_ = false;
  status_ = 0;
  headers_.clear();
  header_bytes_ = 0;
  line_bytes_ = 0;
  body_bytes_ = 0;
  keep_alive_ = false;
  error_.clear();
  over_cap_ = false;
}

ResponseParser::State ResponseParser::feed(const char* data, size_t size, size_t& used) {
  used = 0;
  if (state_ != State::incomplete || size == 0)
    return state_;
  started_ = true;
  used = http_parser_execute(&parser_, &settings_, data, size);
  if (state_ != State::incomplete)
    return state_;  // complete (the parser paused there), or failed in a callback
  const auto code = static_cast<http_errno>(parser_.http_errno);
  if (code == HPE_HEADER_OVERFLOW)
    return over(fmt::format("response headers over {} KiB", k_max_header_bytes / 1024));
  if (code != HPE_OK)
    return fail(fmt::format("not an HTTP response: {}", http_errno_description(code)));
  if (parser_.upgrade)
    return fail("the server switched protocols");
  return state_;
}

ResponseParser::State ResponseParser::feed_eof() {
  if (state_ != State::incomplete)
    return state_;
  if (started_)
    http_parser_execute(&parser_, &settings_, nullptr, 0);
  if (state_ == State::incomplete)
    return fail("the connection closed before the response ended");
  return state_;
}

ResponseParser::State ResponseParser::fail(std::string why) {
  state_ = State::failed;
  error_ = std::move(why);
  return state_;
}

ResponseParser::State ResponseParser::over(std::string what) {
  fail(std::move(what));
  over_cap_ = true;
  return state_;
}

bool ResponseParser::add_header_bytes(size_t length) {
  header_bytes_ += length;
  line_bytes_ += length;
  if (header_bytes_ > k_max_header_bytes) {
    over(fmt::format("response headers over {} KiB", k_max_header_bytes / 1024));
    return false;
  }
  if (line_bytes_ > k_max_header_line_bytes) {
    over(fmt::format("a response header line over {} KiB", k_max_header_line_bytes / 1024));
    return false;
  }
  return true;
}

int ResponseParser::on_message_begin(http_parser* parser) {
  // Also after an interim 1xx response: only the final response's fields count.
  ResponseParser& self = self_of(parser);
  self.headers_.clear();
  self.header_bytes_ = 0;
  self.line_bytes_ = 0;
  self.in_value_ = false;
  return 0;
}

int ResponseParser::on_status(http_parser* parser, const char*, size_t length) {
  return self_of(parser).add_header_bytes(length) ? 0 : -1;
}

int ResponseParser::on_header_field(http_parser* parser, const char* at, size_t length) {
  ResponseParser& self = self_of(parser);
  if (self.in_value_ || self.headers_.empty())
    self.line_bytes_ = 0;  // a new line: the status line's bytes, or the last field's, are done
  if (!self.add_header_bytes(length))
    return -1;
  if (self.in_value_ || self.headers_.empty()) {
    if (self.headers_.size() >= k_max_header_fields) {
      self.over(fmt::format("more than {} response header fields", k_max_header_fields));
      return -1;
    }
    self.headers_.emplace_back();
    self.in_value_ = false;
  }
  self.headers_.back().first.append(at, length);
  return 0;
}

int ResponseParser::on_header_value(http_parser* parser, const char* at, size_t length) {
  ResponseParser& self = self_of(parser);
  if (!self.add_header_bytes(length))
    return -1;
  if (self.headers_.empty())
    self.headers_.emplace_back();
  self.in_value_ = true;
  self.headers_.back().second.append(at, length);
  return 0;
}

int ResponseParser::on_headers_complete(http_parser* parser) {
  ResponseParser& self = self_of(parser);
  self.status_ = parser->status_code;
  // The value's trailing blanks (obsolete line folding leaves some) are not part of it.
  for (auto& [name, value] : self.headers_) {
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
      value.pop_back();
  }
  // 1: the response has no body (a HEAD request's).
  return self.head_request_ ? 1 : 0;
}

int ResponseParser::on_body(http_parser* parser, const char*, size_t length) {
  // A body is counted and dropped, never kept: one that never ends is the timeout's to end.
  self_of(parser).body_bytes_ += length;
  return 0;
}

int ResponseParser::on_message_complete(http_parser* parser) {
  ResponseParser& self = self_of(parser);
  const int status = parser->status_code;
  if (status >= 100 && status < 200 && status != 101)
    return 0;  // interim (100 Continue, 103 Early Hints): the final response follows
  self.keep_alive_ = http_should_keep_alive(parser) != 0;
  self.state_ = State::complete;
  http_parser_pause(parser, 1);  // stop here: what follows belongs to no request
  return 0;
}

}  // namespace rlcheck::http
