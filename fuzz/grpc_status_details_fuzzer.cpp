// Fuzzes what a gRPC service sends back for rlcheck to read by hand: the status details of a
// failed call (grpc-status-details-bin, a serialized google.rpc.Status, for its RetryInfo).
// Malformed bytes must be an error value, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "targets/grpc/retry_info.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)rlcheck::grpc_target::retry_delay_of_status(bytes);
  return 0;
}
