// --clock-skew and --time-source: the clocks a test's clients read, and where a built-in
// strategy takes its `now` from.

#include <algorithm>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"
#include "config/clock_skew.hpp"
#include "config/strategy_name.hpp"

namespace rlcheck::cli {
namespace {

using base::usage_error;
using config::Strategy;
using config::TimeSource;

TimeSource time_source_named(const std::string& name) {
  if (name == "redis")
    return TimeSource::redis;
  if (name == "client")
    return TimeSource::client;
  throw usage_error(fmt::format("--time-source: expected redis or client, got '{}'", name));
}

std::vector<TimeSource> time_sources_of(const std::string& text, bool many) {
  std::vector<TimeSource> sources;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    const std::string name = text.substr(start, comma - start);
    if (name.empty())
      throw usage_error("--time-source: empty name in the list");
    const TimeSource source = time_source_named(name);
    if (std::ranges::find(sources, source) != sources.end())
      throw usage_error(fmt::format("--time-source: {} is named twice", name));
    sources.push_back(source);
    start = comma + 1;
  }
  if (!many && sources.size() > 1) {
    throw usage_error(
        "--time-source: rlcheck redis takes one (redis or client); compare runs each strategy "
        "under a list");
  }
  return sources;
}

// rlcheck redis: the one strategy must read the clock the flag chooses.
void check_strategy_reads(Strategy strategy, TimeSource source) {
  if (!config::clock_read(strategy, source)) {
    throw usage_error(fmt::format(
        "--time-source: {} keeps no clock: its windows are Redis TTLs, whatever the time source",
        config::strategy_name(strategy)));
  }
  if (strategy == Strategy::fixed_window && source == TimeSource::redis) {
    throw usage_error(
        "--time-source: fixed-window names its key by the client's clock (the INCR "
        "documentation's pattern 1), so it has no Redis-time form; give --time-source client or "
        "leave the flag out");
  }
}

}  // namespace

void fill_clock(const RawOptions& raw, bool http, config::Config& config) {
  if (raw.clock_skew) {
    auto skews = config::parse_clock_skews(*raw.clock_skew);
    if (!skews)
      throw usage_error(fmt::format("--clock-skew: {}", skews.error()));
    config.load.clock_skews = std::move(*skews);
  }
  if (!raw.time_source)
    return;
  if (http) {
    throw usage_error(
        "--time-source: applies to a built-in Redis strategy; an HTTP endpoint reads whichever "
        "clock it reads");
  }
  if (config.redis.strategy == Strategy::script) {
    throw usage_error(
        "--time-source: applies to the built-in strategies; a --script gets the time you pass "
        "it (--arg {now_ms}), else reads Redis TIME itself");
  }
  const bool compare = config.command == config::Command::compare;
  config.redis.time_sources = time_sources_of(*raw.time_source, compare);
  config.redis.time_source_given = true;
  if (!compare)
    check_strategy_reads(config.redis.strategy, config.redis.time_sources.front());
}

}  // namespace rlcheck::cli
