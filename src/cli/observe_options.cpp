// --progress-interval, --metrics-listen and --metrics-linger: watching the runs as they go.
#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"
#include "config/duration.hpp"
#include "config/listen_address.hpp"

namespace rlcheck::cli {
namespace {

// A duration of 0 or more; a bare "0" needs no unit.
config::Nanos non_negative_duration(const char* flag, const std::string& text) {
  if (text == "0")
    return config::Nanos(0);
  auto parsed = config::parse_duration(text);
  if (!parsed)
    throw base::usage_error(fmt::format("{}: {}", flag, parsed.error()));
  if (parsed->count() < 0)
    throw base::usage_error(fmt::format("{}: must be 0 or more, got {}", flag, text));
  return *parsed;
}

}  // namespace

void fill_observe(const RawOptions& raw, config::Config& config) {
  config::ObserveConfig& observe = config.observe;
  if (raw.progress_interval)
    observe.progress_interval =
        non_negative_duration("--progress-interval", *raw.progress_interval);
  if (raw.metrics_listen) {
    auto address = config::parse_listen_address(*raw.metrics_listen);
    if (!address)
      throw base::usage_error(fmt::format("--metrics-listen: {}", address.error()));
    observe.metrics_listen = *address;
  }
  if (raw.metrics_linger) {
    if (!raw.metrics_listen)
      throw base::usage_error(
          "--metrics-linger: needs --metrics-listen (there is nothing to serve)");
    if (raw.hook) {
      throw base::usage_error(
          "--metrics-linger: cannot be combined with --hook (the hook must answer at once)");
    }
    observe.metrics_linger = non_negative_duration("--metrics-linger", *raw.metrics_linger);
  }
}

}  // namespace rlcheck::cli
