#pragma once
// `rlcheck explain [CHECK_ID]`: a check's page of docs/checks.md (compiled in), offline; without
// an id, every check with its one-line summary.

#include <string>

namespace rlcheck::app {

// The text to print; an id with no page is a usage error naming the nearest one.
std::string explain_text(const std::string& check_id);

}  // namespace rlcheck::app
