// Fuzzes what a gRPC service's server reflection sends back for rlcheck to read by hand: a
// serialized grpc.reflection.v1alpha.ServerReflectionResponse (its files, or its error).
// Malformed bytes must be an error value, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "targets/grpc/reflection_messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)rlcheck::grpc_target::decode_reflection_reply(bytes);
  return 0;
}
