#pragma once

#include "config/config.hpp"

namespace rlcheck::app {

// `rlcheck serve`: runs the reference rate-limited server until SIGINT or SIGTERM. Says where
// it listens on stderr ("rlcheck serve: listening on http://127.0.0.1:8080/ ..."), so
// --listen 127.0.0.1:0 picks a free port and tells it. Returns the exit code.
int run_serve(const config::Config& config);

}  // namespace rlcheck::app
