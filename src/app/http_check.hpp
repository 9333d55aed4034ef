#pragma once
// Drives one HTTP endpoint through the configured runs and judges it.

#include <string>

#include "config/config.hpp"
#include "engine/run.hpp"
#include "report/report.hpp"

namespace rlcheck::app {

// Runs config.load.runs runs against `url` (before each: --between-runs, --reset-cmd) and
// evaluates the checks. Without --limit the limit is the one the responses advertised; when
// they advertised none, throws FatalError(usage) saying so. A failing --reset-cmd throws
// FatalError(cannot_test).
report::Report check_http_endpoint(const config::Config& config, const std::string& url,
                                   engine::RunObserver* observer = nullptr);

}  // namespace rlcheck::app
