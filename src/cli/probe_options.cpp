#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"

namespace rlcheck::cli {
void fill_probe(const RawOptions& raw, config::Config& config) {
  auto max_time = config::parse_duration(raw.max_time);
  if (!max_time)
    throw base::usage_error(fmt::format("--max-time: {}", max_time.error()));
  if (max_time->count() <= 0)
    throw base::usage_error(fmt::format("--max-time: must be above 0, got {}", raw.max_time));
  config.probe.max_time = *max_time;
  // Without {run} (or a source address per identity) the probe has one identity and waits for
  // it to be fresh again between trials (app/probe_command).
}

}  // namespace rlcheck::cli
