#include "targets/grpc/retry_info.hpp"

#include "targets/grpc/wire_fields.hpp"

namespace rlcheck::grpc_target {
namespace {

// google.protobuf.Duration {int64 seconds = 1; int32 nanos = 2;}
std::optional<RetryDelay> read_duration(std::string_view bytes) {
  WireFields fields(bytes);
  int64_t seconds = 0;
  int64_t nanos = 0;
  for (uint32_t number = fields.next(); number != 0; number = fields.next()) {
    uint64_t value = 0;
    if ((number == 1 || number == 2) && fields.varint()) {
      if (!fields.read_varint(value))
        return std::nullopt;
      if (number == 1)
        seconds = static_cast<int64_t>(value);
      else
        nanos = static_cast<int32_t>(value);  // an int32: negative ones take ten bytes
    } else if (!fields.skip()) {
      return std::nullopt;
    }
  }
  RetryDelay delay;
  const int64_t ms = seconds * 1000 + (nanos + 999'999) / 1'000'000;
  delay.ms = ms < 0 ? 0 : ms;
  delay.whole_seconds = nanos == 0;
  return delay;
}

}  // namespace

std::expected<std::optional<RetryDelay>, std::string> retry_delay_of_status(
    std::string_view status_bytes) {
  // google.rpc.Status {int32 code = 1; string message = 2; repeated google.protobuf.Any
  // details = 3;}, Any {string type_url = 1; bytes value = 2;}, google.rpc.RetryInfo
  // {google.protobuf.Duration retry_delay = 1;}
  WireFields status(status_bytes);
  std::string detail;
  for (uint32_t number = status.next(); number != 0; number = status.next()) {
    if (number != 3 || !status.length_delimited()) {
      if (!status.skip())
        return std::unexpected("grpc-status-details-bin is not a google.rpc.Status");
      continue;
    }
    if (!status.read_bytes(detail))
      return std::unexpected("grpc-status-details-bin: a detail is cut short");
    WireFields any(detail);
    std::string type_url;
    std::string value;
    bool read = true;
    for (uint32_t field = any.next(); field != 0 && read; field = any.next()) {
      if (field == 1 && any.length_delimited())
        read = any.read_bytes(type_url);
      else if (field == 2 && any.length_delimited())
        read = any.read_bytes(value);
      else
        read = any.skip();
    }
    if (!read)
      return std::unexpected("grpc-status-details-bin: a detail is not a google.protobuf.Any");
    if (!type_url.ends_with("/google.rpc.RetryInfo"))
      continue;
    WireFields retry_info(value);
    for (uint32_t field = retry_info.next(); field != 0; field = retry_info.next()) {
      std::string duration;
      if (field == 1 && retry_info.length_delimited()) {
        if (!retry_info.read_bytes(duration))
          return std::unexpected("google.rpc.RetryInfo is cut short");
        std::optional<RetryDelay> delay = read_duration(duration);
        if (!delay)
          return std::unexpected("google.rpc.RetryInfo's retry_delay is not a Duration");
        return delay;
      }
      if (!retry_info.skip())
        return std::unexpected("google.rpc.RetryInfo is not one");
    }
    return std::optional<RetryDelay>{};  // a RetryInfo without a delay
  }
  if (!status.at_end())
    return std::unexpected("grpc-status-details-bin is not a google.rpc.Status");
  return std::optional<RetryDelay>{};
}

}  // namespace rlcheck::grpc_target
