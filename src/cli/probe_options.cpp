#include <fmt/format.h>

#include "app/exit_code.hpp"
#include "cli/raw_options.hpp"

namespace rlcheck::cli {
namespace {

bool mentions_run(const std::string& text) {
  return text.find("{run}") != std::string::npos;
}

}  // namespace

void fill_probe(const RawOptions& raw, config::Config& config) {
  auto max_time = config::parse_duration(raw.max_time);
  if (!max_time)
    throw app::usage_error(fmt::format("--max-time: {}", max_time.error()));
  if (max_time->count() <= 0)
    throw app::usage_error(fmt::format("--max-time: must be above 0, got {}", raw.max_time));
  config.probe.max_time = *max_time;
  if (config.http.urls.empty())
    return;
  // Every phase of the probe needs a limiter state of its own.
  bool fresh = mentions_run(config.http.urls.front());
  for (const std::string& header : config.http.headers)
    fresh = fresh || mentions_run(header);
  if (config.http.body)
    fresh = fresh || mentions_run(*config.http.body);
  if (!fresh) {
    throw app::usage_error(
        "URL: rlcheck probe needs {run} where the limiter reads the identity (the URL, a header "
        "such as -H 'X-API-Key: probe-{run}', or the body): each phase of the probe must meet a "
        "fresh limiter state");
  }
}

}  // namespace rlcheck::cli
