#pragma once

#include <string>
#include <string_view>

namespace rlcheck::base {

const char* version();       // "0.1.0"
const char* git_revision();  // short hash at configure time, or "unknown"
// The --version text: version, revision and the versions of the libraries linked in (libcurl's,
// loaded only when needed, is given).
std::string version_text(std::string_view curl_version);

}  // namespace rlcheck::base
