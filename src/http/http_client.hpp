#pragma once
// The HTTP target both clients read, under the name it had when the curl client was declared
// here: include http/http_target.hpp instead. The clients are made by make_http_client_factory
// (http/client_choice.hpp); the curl client is http/curl_client.hpp. Neither needs curl.h.

#include "http/http_target.hpp"
