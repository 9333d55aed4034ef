// Fuzzes the Retry-After and HTTP-date parsers with arbitrary field values.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http/retry_after.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  constexpr int64_t reference_unix_s = 1'700'000'000;
  if (auto parsed = rlcheck::http::parse_retry_after(value, reference_unix_s); parsed) {
    if (parsed->seconds < 0)
      __builtin_trap();  // a delay is never negative: dates in the past mean "now"
  }
  (void)rlcheck::http::parse_http_date(value);
  return 0;
}
