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

bool reads_clock(const std::string& text, PlaceholderTemplate::Unknown unknown) {
  const auto parsed = PlaceholderTemplate::parse(text, unknown);
  return parsed && parsed->reads_clock();
}

// Whether the target is handed the time: a --script's --arg, or an HTTP request's URL,
// headers or body, carries {now_ms} or {now_s}.
bool target_reads_clock(bool http, const config::Config& config) {
  if (!http) {
    for (const std::string& arg : config.redis.script_args) {
      if (reads_clock(arg, PlaceholderTemplate::Unknown::error))
        return true;
    }
    return false;
  }
  constexpr auto keep = PlaceholderTemplate::Unknown::keep;
  for (const std::string& url : config.http.urls) {
    if (reads_clock(url, keep))
      return true;
  }
  for (const std::string& header : config.http.headers) {
    if (reads_clock(header, keep))
      return true;
  }
  return config.http.body && reads_clock(*config.http.body, keep);
}

std::string read_script(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
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
  if (config.command != config::Command::probe && !config.load.rate &&
      config.load.interval.count() == 0) {
    throw base::usage_error(fmt::format(
        "{}: needs a schedule to make virtual: --rate with --duration, or --interval", k_flag));
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

}  // namespace rlcheck::cli
