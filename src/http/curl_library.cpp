#include "http/curl_library.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "base/exit_code.hpp"

namespace rlcheck::http {
namespace {

constexpr const char* k_soname = "libcurl.so.4";

template <class Function>
void bind_symbol(void* handle, Function& function, const char* name) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) {
    throw base::FatalError(base::ExitCode::cannot_test,
                           fmt::format("{} has no {}: install libcurl4", k_soname, name));
  }
  function = reinterpret_cast<Function>(symbol);
}

CurlLibrary load() {
  void* handle = dlopen(k_soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw base::FatalError(base::ExitCode::cannot_test,
                           fmt::format("cannot load {} (install libcurl4): {}", k_soname,
                                       why != nullptr ? why : "unknown error"));
  }
  CurlLibrary curl{};
  bind_symbol(handle, curl.global_init, "curl_global_init");
  bind_symbol(handle, curl.version_info, "curl_version_info");
  bind_symbol(handle, curl.easy_init, "curl_easy_init");
  bind_symbol(handle, curl.easy_setopt, "curl_easy_setopt");
  bind_symbol(handle, curl.easy_getinfo, "curl_easy_getinfo");
  bind_symbol(handle, curl.easy_cleanup, "curl_easy_cleanup");
  bind_symbol(handle, curl.easy_strerror, "curl_easy_strerror");
  bind_symbol(handle, curl.slist_append, "curl_slist_append");
  bind_symbol(handle, curl.slist_free_all, "curl_slist_free_all");
  bind_symbol(handle, curl.multi_init, "curl_multi_init");
  bind_symbol(handle, curl.multi_setopt, "curl_multi_setopt");
  bind_symbol(handle, curl.multi_add_handle, "curl_multi_add_handle");
  bind_symbol(handle, curl.multi_remove_handle, "curl_multi_remove_handle");
  bind_symbol(handle, curl.multi_assign, "curl_multi_assign");
  bind_symbol(handle, curl.multi_socket_action, "curl_multi_socket_action");
  bind_symbol(handle, curl.multi_info_read, "curl_multi_info_read");
  bind_symbol(handle, curl.multi_cleanup, "curl_multi_cleanup");
  curl.global_init(CURL_GLOBAL_DEFAULT);
  return curl;  // the library stays loaded for the process
}

}  // namespace

const CurlLibrary& curl_library() {
  static const CurlLibrary curl = load();  // thread-safe; a failed load is tried again
  return curl;
}

std::string curl_version() {
  try {
    return curl_library().version_info(CURLVERSION_NOW)->version;
  } catch (const base::FatalError& error) {
    return fmt::format("not loaded ({})", error.what());
  }
}

}  // namespace rlcheck::http
