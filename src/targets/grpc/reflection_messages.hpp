#pragma once
// The messages of gRPC's server reflection (grpc.reflection.v1alpha, reflection.proto) that
// rlcheck asks and reads, in their wire format by hand: Debian ships gRPC's reflection library
// but not its generated headers. A request asks for the file that defines a symbol, or a file by
// its name; a reply carries serialized google.protobuf.FileDescriptorProtos, or an error.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace rlcheck::grpc_target {

// ServerReflectionRequest {string host = 1; oneof {string file_by_filename = 3;
// string file_containing_symbol = 4; ...}}
struct ReflectionRequest {
  enum class Ask { file_by_filename, file_containing_symbol };
  std::string host;  // "" leaves the field out
  Ask ask = Ask::file_containing_symbol;
  std::string name;  // the file's name, or the symbol's full name (pkg.Service)
};

std::string encode_reflection_request(const ReflectionRequest& request);

// ServerReflectionResponse {string valid_host = 1; ServerReflectionRequest original_request = 2;
// oneof {FileDescriptorResponse file_descriptor_response = 4; ...;
// ErrorResponse error_response = 7;}}, FileDescriptorResponse {repeated bytes
// file_descriptor_proto = 1;}, ErrorResponse {int32 error_code = 1; string error_message = 2;}
struct ReflectionReply {
  std::vector<std::string> files;  // serialized FileDescriptorProtos
  bool error = false;              // an error_response
  int32_t error_code = 0;          // a gRPC status code (NOT_FOUND: no such symbol or file)
  std::string error_message;
};

// An error saying what is malformed when the bytes do not parse, or answer neither with files
// nor with an error.
std::expected<ReflectionReply, std::string> decode_reflection_reply(std::string_view bytes);

}  // namespace rlcheck::grpc_target
