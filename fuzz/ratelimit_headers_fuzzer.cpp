// Fuzzes the rate-limit fields of a response (X-RateLimit-*, draft-6, draft-7, IETF structured
// fields) and the decision made from a whole response. The input is header lines
// "name: value\n"; a line without ':' is a value for the rate-limit field its first byte picks,
// so the fuzzer need not spell the names.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http/ratelimit_headers.hpp"
#include "http/response_decision.hpp"

using namespace rlcheck::http;

namespace {

constexpr std::array<std::string_view, 10> k_names = {
    "X-RateLimit-Limit",   "X-RateLimit-Remaining",
    "X-RateLimit-Reset",   "RateLimit-Limit",
    "RateLimit-Remaining", "RateLimit-Reset",
    "RateLimit",           "RateLimit-Policy",
    "Retry-After",         "Date"};

HeaderList header_lines(std::string_view text) {
  HeaderList headers;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
    } else if (!line.empty()) {
      headers.emplace_back(k_names[static_cast<uint8_t>(line[0]) % k_names.size()], line.substr(1));
    }
  }
  return headers;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const HeaderList headers =
      header_lines(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  constexpr int64_t now_unix_s = 1'700'000'000;
  const RateLimitInfo info = parse_ratelimit_headers(headers, now_unix_s);
  (void)info.any();

  static const ResponseRules rules{.allowed = *StatusSet::parse("200-299"),
                                   .denied = *StatusSet::parse("429,503")};
  constexpr std::array<int, 4> k_statuses = {200, 429, 503, 500};
  (void)decide_response(k_statuses[data[0] % k_statuses.size()], headers, rules, now_unix_s);
  return 0;
}
