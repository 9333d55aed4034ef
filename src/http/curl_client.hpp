#pragma once
// The curl client: one curl easy handle per slot on the worker loop's shared multi handle
// (http/curl_multi). The handle (and through curl's connection cache, its keep-alive
// connection) is reused request after request. Serves what the native client does not
// (--http2, proxies, --http-client curl). Only its implementation includes curl.h.

#include <memory>

#include "engine/client.hpp"
#include "http/http_requests.hpp"

namespace rlcheck::http {

// Clients that send `requests` through curl; `requests` must outlive the factory.
std::unique_ptr<engine::ClientFactory> make_curl_client_factory(const HttpRequests& requests);

}  // namespace rlcheck::http
