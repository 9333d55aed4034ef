#include "engine/request_record.hpp"

namespace rlcheck::engine {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::none:
      return "none";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::connection:
      return "connection";
    case ErrorKind::connection_lost:
      return "connection-lost";
    case ErrorKind::crossslot:
      return "crossslot";
    case ErrorKind::not_sent:
      return "not-sent";
    case ErrorKind::server_error:
      return "server-error";
    case ErrorKind::bad_reply:
      return "bad-reply";
    case ErrorKind::refused:
      return "refused";
    case ErrorKind::resolve:
      return "resolve";
    case ErrorKind::reset:
      return "reset";
    case ErrorKind::tls:
      return "tls";
    case ErrorKind::status:
      return "status";
    case ErrorKind::transport:
      return "transport";
    case ErrorKind::protocol:
      return "protocol";
    case ErrorKind::too_large:
      return "too-large";
  }
  return "unknown";
}

bool may_have_reached_limiter(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::none:
    case ErrorKind::connection:
    case ErrorKind::not_sent:
    case ErrorKind::crossslot:
    case ErrorKind::refused:
    case ErrorKind::resolve:
    case ErrorKind::tls:
      return false;
    case ErrorKind::timeout:
    case ErrorKind::connection_lost:
    case ErrorKind::server_error:
    case ErrorKind::bad_reply:
    case ErrorKind::reset:
    case ErrorKind::status:
    case ErrorKind::transport:
    case ErrorKind::protocol:
    case ErrorKind::too_large:
      return true;
  }
  return true;
}

}  // namespace rlcheck::engine
