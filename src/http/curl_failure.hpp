#pragma once
// What a curl transfer that ended without a response says: its error kind and message.

#include <string>

#include <curl/curl.h>

#include "engine/request_record.hpp"

namespace rlcheck::http {

// `detail` is curl's error buffer; empty: curl's own message for `code`.
engine::Decision decide_transport_failure(CURLcode code, const std::string& detail);

}  // namespace rlcheck::http
