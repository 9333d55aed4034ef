#pragma once
// `rlcheck probe URL` on an HTTP endpoint: identity i is the {run} placeholder, a number drawn
// per probe plus i, and with --source-address its own address (address i - 1 of the list,
// cycling).

#include <memory>

#include "config/config.hpp"
#include "probe/probe_target.hpp"

namespace rlcheck::targets {

std::unique_ptr<probe::ProbeTarget> make_http_probe_target(const config::Config& config);

}  // namespace rlcheck::targets
