#pragma once
// libcurl, loaded the first time something calls it: the curl HTTP client (--http-client curl)
// and --version. A Redis run, or one on the native HTTP client, never does, and binding libcurl
// and the 25 libraries it pulls in at start-up took more instructions (15 M) than the rest of
// rlcheck's start-up (bench/README.md, "Less per request").

#include <string>

#include <curl/curl.h>

namespace rlcheck::http {

// The libcurl functions rlcheck calls, bound from libcurl.so.4.
struct CurlLibrary {
  decltype(&curl_global_init) global_init;
  decltype(&curl_version_info) version_info;
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_setopt) easy_setopt;
  decltype(&curl_easy_getinfo) easy_getinfo;
  decltype(&curl_easy_cleanup) easy_cleanup;
  decltype(&curl_easy_strerror) easy_strerror;
  decltype(&curl_slist_append) slist_append;
  decltype(&curl_slist_free_all) slist_free_all;
  decltype(&curl_multi_init) multi_init;
  decltype(&curl_multi_setopt) multi_setopt;
  decltype(&curl_multi_add_handle) multi_add_handle;
  decltype(&curl_multi_remove_handle) multi_remove_handle;
  decltype(&curl_multi_assign) multi_assign;
  decltype(&curl_multi_socket_action) multi_socket_action;
  decltype(&curl_multi_info_read) multi_info_read;
  decltype(&curl_multi_cleanup) multi_cleanup;
};

// Loads and binds libcurl once (curl_global_init included); throws base::FatalError (exit 3)
// naming the library when it cannot be loaded.
const CurlLibrary& curl_library();

// "7.88.1", or why libcurl could not be loaded.
std::string curl_version();

}  // namespace rlcheck::http
