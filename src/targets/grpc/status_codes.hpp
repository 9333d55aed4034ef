#pragma once
// gRPC's status codes by name (RESOURCE_EXHAUSTED) and number (8), as --denied-code takes
// them and reports name them.

#include <expected>
#include <string>
#include <string_view>

namespace rlcheck::grpc_target {

// A code's name, "OK" to "UNAUTHENTICATED"; "CODE_N" past the 17 gRPC defines.
std::string status_code_name(int code);

// "RESOURCE_EXHAUSTED", "resource_exhausted" or "8"; an error naming the text otherwise.
std::expected<int, std::string> parse_status_code(std::string_view text);

}  // namespace rlcheck::grpc_target
