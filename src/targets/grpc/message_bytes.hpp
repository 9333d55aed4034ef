#pragma once
// A message's serialized bytes in and out of gRPC's ByteBuffer, for the generic stubs that send
// and receive them as bytes (the run's calls, server reflection).

#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

namespace rlcheck::grpc_target {

// A buffer holding a copy of `bytes`.
inline grpc::ByteBuffer buffer_of(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// The bytes `buffer` holds, in `out` (`slices`: scratch kept between calls); false when gRPC
// could not hand them over.
inline bool bytes_of(const grpc::ByteBuffer& buffer, std::vector<grpc::Slice>& slices,
                     std::string& out) {
  slices.clear();
  out.clear();
  if (!buffer.Dump(&slices).ok())
    return false;
  for (const grpc::Slice& slice : slices)
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  return true;
}

}  // namespace rlcheck::grpc_target
