#include "config/strategy_name.hpp"

#include <array>
#include <utility>

namespace rlcheck::config {
namespace {

constexpr std::array<std::pair<std::string_view, Strategy>, 11> k_names{{
    {"naive", Strategy::naive},
    {"incr-expire", Strategy::incr_expire},
    {"fixed-window", Strategy::fixed_window},
    {"sliding-window", Strategy::sliding_window},
    {"lua", Strategy::sliding_window},
    {"token-bucket", Strategy::token_bucket},
    {"gcra", Strategy::gcra},
    {"sliding-counter", Strategy::sliding_counter},
    {"fixed-first-hit", Strategy::fixed_first_hit},
    {"leaky-queue", Strategy::leaky_queue},
    {"concurrency", Strategy::concurrency},
}};

}  // namespace

std::optional<Strategy> parse_strategy(std::string_view name) {
  for (const auto& [spelling, strategy] : k_names) {
    if (spelling == name)
      return strategy;
  }
  return std::nullopt;
}

std::string_view strategy_name(Strategy strategy) {
  if (strategy == Strategy::script)
    return "script";
  for (const auto& [spelling, candidate] : k_names) {
    if (candidate == strategy)
      return spelling;
  }
  return "unknown";
}

std::optional<TimeSource> clock_read(Strategy strategy, TimeSource chosen) {
  switch (strategy) {
    case Strategy::naive:
    case Strategy::incr_expire:
    case Strategy::fixed_first_hit:
    case Strategy::script:
      return std::nullopt;
    case Strategy::fixed_window:
      return TimeSource::client;
    case Strategy::sliding_window:
    case Strategy::token_bucket:
    case Strategy::gcra:
    case Strategy::sliding_counter:
      return chosen;
    case Strategy::leaky_queue:
    case Strategy::concurrency:
      return TimeSource::redis;
  }
  return std::nullopt;
}

bool strategy_takes_cost(Strategy strategy) {
  return strategy != Strategy::leaky_queue && strategy != Strategy::concurrency &&
         strategy != Strategy::script;
}

bool time_source_matters(Strategy strategy) {
  return clock_read(strategy, TimeSource::redis) != clock_read(strategy, TimeSource::client);
}

std::string_view strategy_names_list() {
  return "naive, incr-expire, fixed-first-hit, fixed-window, sliding-window (lua), token-bucket, "
         "gcra, sliding-counter, leaky-queue (serve), concurrency (serve)";
}

}  // namespace rlcheck::config
