#include "targets/grpc/status_codes.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace rlcheck::grpc_target {
namespace {

// In number order: the index is the code (grpc/status.h, google.rpc.Code).
constexpr std::array<std::string_view, 17> k_code_names = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

}  // namespace

std::string status_code_name(int code) {
  if (code >= 0 && code < static_cast<int>(k_code_names.size()))
    return std::string(k_code_names[static_cast<size_t>(code)]);
  return fmt::format("CODE_{}", code);
}

std::expected<int, std::string> parse_status_code(std::string_view text) {
  int number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error == std::errc{} && end == text.data() + text.size() && !text.empty()) {
    if (number >= 0 && number < static_cast<int>(k_code_names.size()))
      return number;
    return std::unexpected(fmt::format("'{}' is not a gRPC status code (0-16)", text));
  }
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (size_t i = 0; i < k_code_names.size(); ++i) {
    if (k_code_names[i] == upper)
      return static_cast<int>(i);
  }
  return std::unexpected(fmt::format(
      "'{}' is not a gRPC status code (a name such as RESOURCE_EXHAUSTED, or 0-16)", text));
}

}  // namespace rlcheck::grpc_target
