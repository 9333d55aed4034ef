#pragma once
// `rlcheck http URL`: an HTTP endpoint, and compare's and probe's http:// and https:// URLs.

#include "targets/target_kind.hpp"

namespace rlcheck::targets {

TargetKind http_kind();

}  // namespace rlcheck::targets
