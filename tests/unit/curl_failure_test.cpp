#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "http/curl_failure.hpp"
#include "http/curl_library.hpp"

using rlcheck::engine::Decision;
using rlcheck::engine::ErrorKind;
using rlcheck::engine::Outcome;
using rlcheck::http::decide_transport_failure;

TEST_CASE("decide_transport_failure maps curl's codes to error kinds") {
  const std::vector<std::pair<CURLcode, ErrorKind>> cases{
      {CURLE_COULDNT_CONNECT, ErrorKind::refused},
      {CURLE_COULDNT_RESOLVE_HOST, ErrorKind::resolve},
      {CURLE_COULDNT_RESOLVE_PROXY, ErrorKind::resolve},
      {CURLE_OPERATION_TIMEDOUT, ErrorKind::timeout},
      {CURLE_GOT_NOTHING, ErrorKind::reset},
      {CURLE_RECV_ERROR, ErrorKind::reset},
      {CURLE_SEND_ERROR, ErrorKind::reset},
      {CURLE_PARTIAL_FILE, ErrorKind::reset},
      {CURLE_PEER_FAILED_VERIFICATION, ErrorKind::tls},
      {CURLE_SSL_CONNECT_ERROR, ErrorKind::tls},
      {CURLE_SSL_CACERT_BADFILE, ErrorKind::tls},
      {CURLE_URL_MALFORMAT, ErrorKind::transport},
      {CURLE_UNSUPPORTED_PROTOCOL, ErrorKind::protocol},
      {CURLE_WEIRD_SERVER_REPLY, ErrorKind::protocol},
      {CURLE_OUT_OF_MEMORY, ErrorKind::too_large},
      {CURLE_TOO_MANY_REDIRECTS, ErrorKind::transport},
      {CURLE_WRITE_ERROR, ErrorKind::transport},
      {CURLE_ABORTED_BY_CALLBACK, ErrorKind::transport},
  };
  for (const auto& [code, kind] : cases) {
    CAPTURE(rlcheck::http::curl_library().easy_strerror(code));
    const Decision d = decide_transport_failure(code, "detail");
    CHECK(d.outcome == Outcome::error);
    CHECK(d.error == kind);
    CHECK(d.error_message == "detail");
    CHECK(d.status == 0);
    CHECK_FALSE(d.retry_ms.has_value());
  }
}

TEST_CASE("decide_transport_failure keeps curl's detail, else uses curl's own message") {
  const Decision with_detail =
      decide_transport_failure(CURLE_COULDNT_CONNECT, "Failed to connect to 127.0.0.1 port 1");
  CHECK(with_detail.error_message == "Failed to connect to 127.0.0.1 port 1");

  const Decision without = decide_transport_failure(CURLE_OPERATION_TIMEDOUT, "");
  CHECK(without.error == ErrorKind::timeout);
  CHECK(without.error_message ==
        rlcheck::http::curl_library().easy_strerror(CURLE_OPERATION_TIMEDOUT));
  CHECK_FALSE(without.error_message.empty());
}
