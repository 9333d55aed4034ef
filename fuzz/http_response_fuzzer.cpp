// Fuzzes the native HTTP client's response reading (http/response_parser over Node's
// http_parser): any bytes, fed whole or split at every chunk boundary the input's first byte
// chooses, must end complete, failed or incomplete, within the caps, and never crash.

#include <cstddef>
#include <cstdint>

#include "http/response_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const size_t step = 1 + data[0] % 64;  // the reads a connection might deliver
  const bool head_request = (data[0] & 0x80) != 0;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  size_t left = size - 1;

  rlcheck::http::ResponseParser parser;
  parser.reset(head_request);
  while (left > 0) {
    const size_t chunk = left < step ? left : step;
    size_t used = 0;
    const auto state = parser.feed(bytes, chunk, used);
    if (used > chunk)
      __builtin_trap();
    if (state != rlcheck::http::ResponseParser::State::incomplete)
      break;
    bytes += chunk;
    left -= chunk;
  }
  if (parser.state() == rlcheck::http::ResponseParser::State::incomplete)
    parser.feed_eof();
  size_t header_bytes = 0;
  for (const auto& [name, value] : parser.headers())
    header_bytes += name.size() + value.size();
  if (header_bytes > rlcheck::http::ResponseParser::k_max_header_bytes)
    __builtin_trap();
  return 0;
}
