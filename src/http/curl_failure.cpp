#include "http/curl_failure.hpp"

#include "http/curl_library.hpp"

namespace rlcheck::http {
namespace {

engine::ErrorKind kind_of(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      return engine::ErrorKind::refused;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return engine::ErrorKind::resolve;
    case CURLE_OPERATION_TIMEDOUT:
      return engine::ErrorKind::timeout;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
      return engine::ErrorKind::reset;
    case CURLE_OUT_OF_MEMORY:  // what curl returns for a header line over its 100 KB
      return engine::ErrorKind::too_large;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:  // the URL was checked: here, a reply that is not HTTP
      return engine::ErrorKind::protocol;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
      return engine::ErrorKind::tls;
    default:
      return engine::ErrorKind::transport;
  }
}

}  // namespace

engine::Decision decide_transport_failure(CURLcode code, const std::string& detail) {
  engine::Decision decision;
  decision.outcome = engine::Outcome::error;
  decision.error = kind_of(code);
  decision.error_message = detail.empty() ? curl_library().easy_strerror(code) : detail;
  return decision;
}

}  // namespace rlcheck::http
