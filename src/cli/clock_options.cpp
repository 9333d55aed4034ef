#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/raw_options.hpp"
#include "engine/placeholder_template.hpp"
#include "redis/script_time.hpp"

namespace rlcheck::cli {
namespace {

using engine::PlaceholderTemplate;

// Whether the target is handed the time: a --script's --arg, or an HTTP request's URL,
// headers or body, carries {now_ms} or {now_s}.
bool target_reads_clock(bool http, const config::Config& config) {
  if (!http)
    return engine::any_reads_clock(config.redis.script_args, PlaceholderTemplate::Unknown::error);
  std::vector<std::string> texts = config.http.urls;
  texts.insert(texts.end(), config.http.headers.begin(), config.http.headers.end());
  if (config.http.body)
    texts.push_back(*config.http.body);
  return engine::any_reads_clock(texts, PlaceholderTemplate::Unknown::keep);
}

std::string read_script(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

namespace {

// What every target shares once it is told the time: a schedule to make virtual, a span that
// fits, no faults, one process.
void make_schedule_virtual(config::Config& config) {
  constexpr const char* k_flag = "--virtual-clock";
  if (config.command != config::Command::probe && !config.load.open_model() &&
      config.load.interval.count() == 0) {
    throw base::usage_error(
        fmt::format("{}: needs a schedule to make virtual: --rate with --duration, --stages, or "
                    "--interval",
                    k_flag));
  }
  // Virtual instants are Unix nanoseconds in 64 bits: the runs must end well before 2262.
  constexpr long double k_longest_ns = 100.0L * 365 * 24 * 3600 * 1e9;
  long double stages_ns = 0;
  for (const config::Stage& stage : config.load.stages)
    stages_ns += static_cast<long double>(stage.duration.count());
  const long double span_ns = !config.load.stages.empty() ? stages_ns
                              : config.load.rate
                                  ? static_cast<long double>(config.load.rate->period.count()) *
                                        static_cast<long double>(config.load.requests) /
                                        static_cast<long double>(config.load.rate->tokens)
                                  : static_cast<long double>(config.load.interval.count()) *
                                        static_cast<long double>(config.load.requests);
  // Runs follow one another on the virtual clock: all of them count.
  const long double runs_ns = span_ns * config.load.runs;
  if (runs_ns > k_longest_ns) {
    throw base::usage_error(
        fmt::format("{}: the runs span {:.0f} years of virtual time; at most 100 virtual years",
                    k_flag, static_cast<double>(runs_ns / (365.0L * 24 * 3600 * 1e9))));
  }
  if (!config.faults.faults.empty()) {
    throw base::usage_error(fmt::format(
        "{}: not with --fault (faults act on the real clock, which a virtual run outpaces)",
        k_flag));
  }
  if (config.workers.count > 1 || config.workers.distributed()) {
    throw base::usage_error(fmt::format(
        "{}: not with --workers (each identity's requests must leave from one process, in "
        "order)",
        k_flag));
  }
  config.load.virtual_clock = true;
}

}  // namespace

void fill_virtual_clock(const RawOptions& raw, bool http, config::Config& config) {
  if (!raw.virtual_clock)
    return;
  constexpr const char* k_flag = "--virtual-clock";
  if (config.command == config::Command::compare) {
    throw base::usage_error(fmt::format(
        "{}: not with compare; use rlcheck redis --script or rlcheck http on each", k_flag));
  }
  if (!http && config.redis.strategy != config::Strategy::script) {
    throw base::usage_error(fmt::format(
        "{}: applies to --script or an HTTP endpoint that takes {{now_ms}}/{{now_s}}; Redis "
        "TIME and TTLs, which the built-in strategies decide by, cannot be made virtual",
        k_flag));
  }
  if (!target_reads_clock(http, config)) {
    throw base::usage_error(fmt::format(
        "{}: the limiter is never told the time: pass {{now_ms}} or {{now_s}} to it ({})", k_flag,
        http ? "in the URL, a --header or the --data body" : "--arg {now_ms}"));
  }
  if (!http) {
    if (const auto line = redis::line_calling_time(read_script(config.redis.script_path))) {
      throw base::usage_error(fmt::format(
          "{}: {} calls TIME (line {}): Redis's clock is not virtual, so its decisions would "
          "ignore the virtual instants; pass now as an argument (--arg {{now_ms}})",
          k_flag, config.redis.script_path, *line));
    }
  }
  make_schedule_virtual(config);
}

void fill_virtual_clock_told(const RawOptions& raw, const std::vector<std::string>& told,
                             std::string_view where, config::Config& config) {
  if (!raw.virtual_clock)
    return;
  if (config.command == config::Command::compare) {
    throw base::usage_error(
        "--virtual-clock: not with compare; give each target a command of its own");
  }
  if (!engine::any_reads_clock(told, PlaceholderTemplate::Unknown::keep)) {
    throw base::usage_error(fmt::format(
        "--virtual-clock: the limiter is never told the time: pass {{now_ms}} or {{now_s}} to it "
        "({})",
        where));
  }
  make_schedule_virtual(config);
}

}  // namespace rlcheck::cli
