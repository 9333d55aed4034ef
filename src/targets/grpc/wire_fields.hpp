#pragma once
// The fields of one protobuf message read from its wire format by hand, in order (unknown ones
// skipped): for the few messages of gRPC's own protocols whose generated headers Debian does not
// ship (google.rpc.Status, server reflection's).

#include <cstdint>
#include <string>
#include <string_view>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

namespace rlcheck::grpc_target {

class WireFields {
 public:
  using Wire = google::protobuf::internal::WireFormatLite;

  explicit WireFields(std::string_view bytes)
      : stream_(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size())) {}

  // The next field's number, 0 at the end or once the bytes stop parsing (at_end tells which).
  uint32_t next() {
    tag_ = stream_.ReadTag();
    return Wire::GetTagFieldNumber(tag_);
  }
  bool length_delimited() const {
    return Wire::GetTagWireType(tag_) == Wire::WIRETYPE_LENGTH_DELIMITED;
  }
  bool varint() const { return Wire::GetTagWireType(tag_) == Wire::WIRETYPE_VARINT; }
  bool read_bytes(std::string& out) {
    uint32_t size = 0;
    return stream_.ReadVarint32(&size) && stream_.ReadString(&out, static_cast<int>(size));
  }
  bool read_varint(uint64_t& out) { return stream_.ReadVarint64(&out); }
  bool skip() { return Wire::SkipField(&stream_, tag_); }
  // Whether the bytes ended cleanly (not in the middle of a field).
  bool at_end() { return tag_ == 0 && stream_.ConsumedEntireMessage(); }

 private:
  google::protobuf::io::CodedInputStream stream_;
  uint32_t tag_ = 0;
};

}  // namespace rlcheck::grpc_target
