#include "targets/grpc/reflection_messages.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "targets/grpc/wire_fields.hpp"

namespace rlcheck::grpc_target {
namespace {

namespace io = google::protobuf::io;
using Wire = WireFields::Wire;

void write_string_field(io::CodedOutputStream& out, int number, const std::string& value) {
  out.WriteTag(Wire::MakeTag(number, Wire::WIRETYPE_LENGTH_DELIMITED));
  out.WriteVarint32(static_cast<uint32_t>(value.size()));
  out.WriteString(value);
}

// FileDescriptorResponse {repeated bytes file_descriptor_proto = 1;}: its files join `files`.
bool read_file_descriptors(std::string_view bytes, std::vector<std::string>& files) {
  WireFields fields(bytes);
  for (uint32_t number = fields.next(); number != 0; number = fields.next()) {
    if (number == 1 && fields.length_delimited()) {
      if (!fields.read_bytes(files.emplace_back()))
        return false;
    } else if (!fields.skip()) {
      return false;
    }
  }
  return fields.at_end();
}

// ErrorResponse {int32 error_code = 1; string error_message = 2;}, merged into `reply`.
bool read_error(std::string_view bytes, ReflectionReply& reply) {
  WireFields fields(bytes);
  for (uint32_t number = fields.next(); number != 0; number = fields.next()) {
    bool read = true;
    if (number == 1 && fields.varint()) {
      uint64_t code = 0;
      read = fields.read_varint(code);
      reply.error_code = static_cast<int32_t>(code);  // an int32: negative ones take ten bytes
    } else if (number == 2 && fields.length_delimited()) {
      read = fields.read_bytes(reply.error_message);
    } else {
      read = fields.skip();
    }
    if (!read)
      return false;
  }
  return fields.at_end();
}

}  // namespace

std::string encode_reflection_request(const ReflectionRequest& request) {
  std::string bytes;
  {
    io::StringOutputStream stream(&bytes);
    io::CodedOutputStream out(&stream);
    if (!request.host.empty())
      write_string_field(out, 1, request.host);
    write_string_field(out, request.ask == ReflectionRequest::Ask::file_by_filename ? 3 : 4,
                       request.name);
  }  // the stream writes its last bytes as it goes
  return bytes;
}

std::expected<ReflectionReply, std::string> decode_reflection_reply(std::string_view bytes) {
  ReflectionReply reply;
  bool answered = false;
  WireFields fields(bytes);
  std::string inner;
  for (uint32_t number = fields.next(); number != 0; number = fields.next()) {
    if ((number == 4 || number == 7) && fields.length_delimited()) {
      if (!fields.read_bytes(inner))
        return std::unexpected("a server reflection reply is cut short");
      // Members of the oneof merge with the same one before them, and replace another.
      if ((number == 7) != reply.error)
        reply = ReflectionReply{};
      reply.error = number == 7;
      const bool read =
          reply.error ? read_error(inner, reply) : read_file_descriptors(inner, reply.files);
      if (!read) {
        return std::unexpected(reply.error
                                   ? "a server reflection reply's error does not parse"
                                   : "a server reflection reply's file descriptors do not parse");
      }
      answered = true;
    } else if (!fields.skip()) {
      return std::unexpected("a server reflection reply does not parse");
    }
  }
  if (!fields.at_end())
    return std::unexpected("a server reflection reply does not parse");
  if (!answered)
    return std::unexpected("a server reflection reply carries neither files nor an error");
  return reply;
}

}  // namespace rlcheck::grpc_target
