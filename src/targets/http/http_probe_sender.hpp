#pragma once
// `rlcheck probe URL` on an HTTP endpoint: identity i is the {run} placeholder, a number drawn
// per probe plus i, and with --source-address its own address (address i - 1 of the list,
// cycling).

#include <memory>

#include "config/config.hpp"
#include "probe/probe_sender.hpp"

namespace rlcheck::targets {

std::unique_ptr<probe::ProbeSender> make_http_probe_sender(const config::Config& config);

}  // namespace rlcheck::targets
