#pragma once
// Drives one HTTP endpoint through the configured runs and judges it.

#include <string>

#include "config/config.hpp"
#include "coord/session.hpp"
#include "engine/run.hpp"
#include "http/http_client.hpp"
#include "report/records_writer.hpp"
#include "report/report.hpp"

namespace rlcheck::app {

// The requests of `url` as the configuration describes them (method, headers, body, status
// rules, placeholders); `seed` seeds {uuid}. Shared with `rlcheck probe`.
http::HttpTarget make_http_target(const config::Config& config, const std::string& url,
                                  uint64_t seed);

// Runs config.load.runs runs against `url` (before each: --between-runs, --reset-cmd) and
// evaluates the checks. Without --limit (--window) the limit (window) is the one the responses
// advertised (app/advertised_params.hpp); a window advertised by nobody is the default, with
// one warning line on stderr. When no limit was advertised and --limit is missing, throws
// FatalError naming the statuses seen: usage when some request was allowed or denied,
// cannot_test when every response was an error status. A failing --reset-cmd throws
// FatalError(cannot_test). With `records`, every run's requests are written to it under `url`.
report::Report check_http_endpoint(const config::Config& config, const std::string& url,
                                   engine::RunObserver* observer = nullptr,
                                   report::RecordsWriter* records = nullptr,
                                   coord::Session* shared = nullptr);

}  // namespace rlcheck::app
