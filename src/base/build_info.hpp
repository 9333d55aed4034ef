#pragma once

#include <string>

namespace rlcheck::base {

const char* version();       // "0.1.0"
const char* git_revision();  // short hash at configure time, or "unknown"
// The --version text: version, revision and the versions of the libraries linked in.
std::string version_text();

}  // namespace rlcheck::base
