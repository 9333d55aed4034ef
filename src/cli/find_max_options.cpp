// --find-max --slo: the search's objective and its first step (--rate, --duration), and what
// a search cannot be combined with.

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"

namespace rlcheck::cli {
namespace {

constexpr const char* k_flag = "--find-max";

void refuse(bool given, const char* flag, const char* why) {
  if (given)
    throw base::usage_error(fmt::format("{}: not with {}: {}", flag, k_flag, why));
}

}  // namespace

void fill_find_max(const RawOptions& raw, config::Config& config) {
  if (!raw.find_max) {
    if (raw.slo)
      throw base::usage_error("--slo: needs --find-max (the objective each step is held to)");
    return;
  }
  if (!raw.slo)
    throw base::usage_error(fmt::format("{}: needs --slo, e.g. --slo 'p99<10ms'", k_flag));
  auto slo = config::parse_slo(*raw.slo);
  if (!slo)
    throw base::usage_error(fmt::format("--slo: {}", slo.error()));

  refuse(config.command == config::Command::compare, "compare",
         "search each target on its own (rlcheck redis or rlcheck http)");
  refuse(raw.requests.has_value(), "--requests", "each step sends --rate x --duration");
  refuse(raw.interval.has_value(), "--interval", "each step sends at its own rate");
  refuse(raw.runs.has_value(), "--runs", "the search decides how many runs (steps) it takes");
  refuse(raw.virtual_clock, "--virtual-clock", "latency has no meaning on the virtual clock");
  refuse(config.workers.distributed(), "--workers",
         "one process searches; a rate it cannot send is reported as a lower bound");
  refuse(!config.faults.faults.empty(), "--fault", "faults would decide the latency measured");
  refuse(raw.verify_retry_after, "--verify-retry-after",
         "the search's last step is known only once it ends; verify on a run of its own");

  config::Rate start{100, std::chrono::seconds(1)};
  if (raw.rate) {
    auto rate = config::parse_rate(*raw.rate);
    if (!rate)
      throw base::usage_error(fmt::format("--rate: {}", rate.error()));
    if (rate->tokens <= 0)
      throw base::usage_error(fmt::format("--rate: must be above 0, got {}", *raw.rate));
    start = *rate;
  }
  config::Nanos step = config.find_max.step;
  if (raw.duration) {
    auto duration = config::parse_duration(*raw.duration);
    if (!duration || duration->count() <= 0) {
      throw base::usage_error(
          fmt::format("--duration: {}", duration ? "must be above 0" : duration.error().c_str()));
    }
    step = *duration;
  }
  const long double per_s = static_cast<long double>(start.tokens) * 1e9L /
                            static_cast<long double>(start.period.count());
  if (per_s < 1) {
    throw base::usage_error(
        fmt::format("--rate: {} is below 1/s, where the search starts at the least", *raw.rate));
  }
  if (per_s * static_cast<long double>(step.count()) / 1e9L < 1) {
    throw base::usage_error(fmt::format("--duration: {} at {} sends no request",
                                        config::format_duration(step), config::format_rate(start)));
  }
  config.load.rate = start;
  config.load.requests =
      static_cast<int64_t>(per_s * static_cast<long double>(step.count()) / 1e9L);
  config.find_max = {true, std::move(*slo), step};
}

}  // namespace rlcheck::cli
